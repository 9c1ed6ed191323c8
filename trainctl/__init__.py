"""`trainctl`, the platform's command line (trainctl/cli.py; `trainctl --help` lists the commands, each module
registers its own): checking and reading specs (validate, render, summary, review), trying a workload on this
machine (run-local, prep-data), checking an account before a deploy (preflight, lookup-zones, prices), and operating
deployed workloads (start, runs, logs, stop, smoke).

It compiles through the pure compiler's one pipeline (compiler/pipeline.py), the same one `cdk synth` runs, and
never imports the CDK layer (an import-linter contract): a synth it needs (review) runs the CDK app as a program.
The AWS commands call AWS through boto3 with the environment's account and region from cdk.json (aws.py); a run is
found by target.py and run_lookup.py, its jobs by history.py, its outcome by run_summary.py; review/ holds the
review's parts.
"""
