#!/usr/bin/env python3
"""The CDK app: one Stage per environment of cdk.json (`cdk deploy 'dev/*'`), platform stacks plus workloads.

Bad input (cdk.json environments, workload specs) stops synth with the problems listed, not a traceback.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from platform_constructs.network import required_private_ips
from stacks.platform import build_app
from compiler.environments import load_environments
from compiler.errors import SpecError


def main() -> int:
    from stacks.workloads import add_workload_stacks
    from compiler.images import pulled_repositories
    from compiler.spec import load_all_workloads

    try:
        environments = load_environments()
        workloads = load_all_workloads()
        ips = required_private_ips((w.instance, w.instance_count) for w in workloads)
        # The execution role may pull exactly the framework-image repositories the workloads use.
        app, stages = build_app(environments, required_private_ips=ips,
                                pulled_repositories=lambda env: pulled_repositories(workloads, env.region))
        for stage in stages.values():
            add_workload_stacks(stage, stage.platform, workloads)  # compiles every workload for the environment
    except SpecError as error:
        print(f"cdk synth stopped: fix these settings first\n{error}", file=sys.stderr)
        return 1
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
