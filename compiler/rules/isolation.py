"""Network isolation is on unless a spec says why not (docs/security.md, "Network isolation").

With `EnableNetworkIsolation` the training container makes no network call and holds no AWS credentials; peers of a
multi-node job still reach each other, and SageMaker still downloads inputs and code and uploads checkpoints and
outputs with the execution role, through the VPC (SageMaker Developer Guide, "Run Training and Inference Containers
in Internet-Free Mode"; CreateTrainingJob's EnableNetworkIsolation). A job that must call out (Secrets Manager, a
package index through a NAT gateway) turns it off with `enable_network_isolation: false` and a reason, kept beside
it in the spec for the review, as `unencrypted_traffic_reason` is for traffic encryption.
"""

from __future__ import annotations

from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def network_isolation_is_off_only_with_a_reason(w: Workload, f: Findings) -> None:
    if not w.enable_network_isolation and not w.network_isolation_off_reason:
        f.problem("enable_network_isolation", "network isolation is on by default (the container reaches no network "
                  "and holds no AWS credentials; SageMaker still moves inputs, code, checkpoints and outputs); to turn "
                  "it off for this workload, say why in network_isolation_off_reason (e.g. reads HF_TOKEN from "
                  "Secrets Manager at start), or remove enable_network_isolation: false")
    if w.enable_network_isolation and w.network_isolation_off_reason:
        f.warn("network_isolation_off_reason", "has no effect unless enable_network_isolation is false")
    if not w.enable_network_isolation and w.uses_fsx:
        f.warn("enable_network_isolation", "with network isolation off, the job's network reaches the whole FSx file "
               "system (its security group admits the Lustre ports): directory_path bounds what SageMaker mounts, not "
               "what a process with a Lustre client could mount; keep isolation on for FSx readers where you can "
               "(docs/security.md#what-fsx-still-allows)")
