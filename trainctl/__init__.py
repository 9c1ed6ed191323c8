"""`trainctl`, the platform's command line (trainctl/cli.py): validate, render, summary, review, run-local,
prep-data, lookup-zones, start, runs, logs, stop.

It compiles through the pure compiler's one pipeline (compiler/pipeline.py), the same one `cdk synth` runs, and
never imports the CDK layer (an import-linter contract): a synth it needs (review) runs the CDK app as a program.
The AWS commands call AWS through boto3 with the environment's account and region from cdk.json.
"""
