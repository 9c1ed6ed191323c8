"""`trainctl review [--base REF]`: what a change does to every environment, as one Markdown report.

It synthesizes the base revision (default: the merge base with the main branch) in a temporary git worktree and the
working tree, both offline (no credentials: `app.py` reads the cached lookups; revisions.py), then compares every
stack's template with the CDK's own diff engine (`@aws-cdk/cloudformation-diff`, through template_diff.js), which
knows which property changes replace a resource. The report (report.py) lists stateful resources replaced or removed
first and loud (findings.py); then per environment (changes.py): workloads added, changed or removed (from the
workload summary each state machine carries in its template metadata) with the values that changed and their cost per
hour before and after; every other resource change with its values before and after; the IAM statements,
managed-policy attachments and security group rules added or removed; the validation and cdk-nag findings; and which
stack holds which workload.

Exit status (command.py): 0, or 1 when a stateful resource (file system, bucket, key, repository, log group, VPC,
subnet, ...) would be replaced or removed and `acknowledged-changes.yaml` (acknowledgments.py) does not acknowledge
it, or when an export another stack imports would be removed or changed, or a resource would be created under a fixed
name still taken (names.py; either deploy would fail), or a stateful resource stops being retained (DeletionPolicy
Retain -> Delete); 2 when a revision cannot be synthesized. Stacks that leave the
app are listed first: `cdk deploy` does not delete them.
"""
