"""`trainctl`, the platform's command line (trainctl/cli.py; `trainctl --help` lists the commands, each wing registers
its own), in wings by what they are for:

- project/: the project's own files: checking and reading specs (validate, render), the summary of a synthesized
  assembly, and the files written from AWS for synth to read offline (lookup-zones, prices);
- review/: what a change does to every environment (review);
- local/: trying a workload on this machine (run-local, prep-data);
- preflight/: checking an account before a deploy (preflight, one module per group of checks in preflight/checks/);
- run/: operating deployed workloads (start, runs, logs, stop), and what they share: naming a run, its history and
  summary, following it;
- smoke/: the deployed platform proving itself with one tiny run (smoke);
- common/: what every wing stands on: the one project-and-environment lookup, AWS access, where a workload's runs
  live, the one cloud-assembly reader, the one money formatter, the pass/fail rows.

It compiles through the pure compiler's one pipeline (compiler/pipeline.py), the same one `cdk synth` runs, and
never imports the CDK layer (an import-linter contract): a synth it needs (review) runs the CDK app as a program.
The AWS commands call AWS through boto3 with the environment's account and region from cdk.json (common/aws.py).
"""
