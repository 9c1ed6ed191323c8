"""The platform's own facts, which depend on nothing else of the compiler: the instance catalog (GPUs, EFA, prices;
data/), the placeholders deploy-time values travel as, the run metrics, the VPC endpoints' policies, what the DNS
firewall admits, realistic sample values, the typed summaries a run and a workload report (written here, read by
the CLI), and what the SageMaker Developer Guide documents of each built-in algorithm (algorithms.py)."""
