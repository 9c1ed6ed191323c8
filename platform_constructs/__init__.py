"""The CDK constructs the stacks are made of, each module one part of an environment:

- network and storage: the VPC with its pinned training subnet, EFA-ready job security groups and endpoints
  (network.py), the DNS firewall (dns_firewall.py), the environment's key (keys.py), the buckets (storage.py), FSx
  for Lustre (lustre.py);
- images and code: the ECR repositories with each image built and copied in (registry.py), a workload's code asset
  (source_bundle.py);
- runs: what every job shares (training_jobs.py), each workload's roles, state machine and failed-runs alarm
  (workload.py), its schedule (schedule.py), the dashboards and the capacity alarm (monitoring.py), the monthly
  budget (budget.py);
- logs: the names AWS services create for themselves, which no stack may own (service_names.py), the provider
  functions' own groups (function_logs.py), retention (retention.py);
- rules: synth-time guards (guards.py, rule_descriptions.py), cdk-nag and checkov acknowledgments with their
  reasons (nag.py, checkov.py), trust conditions on the CDK's own roles (trust.py).

What they build comes from the compiler: each workload compiled once (compiler/pipeline.py), handed to them by stacks/.
"""
