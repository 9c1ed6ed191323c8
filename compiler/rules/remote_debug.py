"""Remote debugging is on only with a reason (docs/security.md, "Remote debugging").

`enable_remote_debug: true` (the request's RemoteDebugConfig) has SageMaker start an AWS Systems Manager agent in the
training container, and anyone in the account whose IAM allows `ssm:StartSession` on the job then gets a shell in the
container, with the job's role, its data and its secrets (SageMaker Developer Guide, "Access a training container
through AWS Systems Manager (SSM) for remote debugging"). Who may start sessions is the account's IAM, outside this
platform's roles; so a spec turns it on only with `remote_debug_reason`, kept beside it for the review, as
`network_isolation_off_reason` is for network isolation. The platform grants no execution role the
`ssmmessages:*` permissions the agent needs and its network has no Systems Manager endpoint, so a session cannot
connect until an environment adds both: the rule warns so.
"""

from __future__ import annotations

from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def remote_debug_only_with_a_reason(w: Workload, f: Findings) -> None:
    if w.enable_remote_debug and not w.remote_debug_reason:
        f.problem("enable_remote_debug", "a job with remote debugging takes shell sessions (AWS Systems Manager) from "
                  "anyone in the account whose IAM allows ssm:StartSession on it, with the job's role, data and "
                  "secrets: say why in remote_debug_reason (kept in the spec for the review), or remove "
                  "enable_remote_debug (debug the entry point with `trainctl run-local`)")
    elif w.enable_remote_debug:
        f.warn("enable_remote_debug", "the platform grants no execution role the ssmmessages permissions the "
               "Systems Manager agent needs, and its network has no Systems Manager endpoint: a session cannot "
               "connect until the environment adds both (docs/security.md#remote-debugging)")
    if w.remote_debug_reason and not w.enable_remote_debug:
        f.warn("remote_debug_reason", "has no effect unless enable_remote_debug is true")
