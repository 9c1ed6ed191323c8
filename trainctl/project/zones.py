"""`trainctl lookup-zones --env ENV`: cache an account's Availability Zones in cdk.context.json, as the CDK does.

Synth never looks anything up (it runs offline, in CI, without credentials): it reads the zones from cdk.context.json
and refuses an environment whose lookup is missing or whose pinned zone is not among them. This command is the one
place that asks AWS, with credentials for the environment's account, and writes the answer under the key the CDK
itself uses (`availability-zones:account=<account>:region=<region>`), keeping only zones in the `available` state
as the CDK's own lookup does. Commit the file afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys

from compiler.inputs.environments import zone_problems
from compiler.inputs.files import write_text_atomically
from trainctl.common.aws import session
from trainctl.common.lookup import environment, project_of


def lookup_zones(args: argparse.Namespace) -> int:
    project = project_of(args)
    env = environment(project, args.env)
    cached = project.cached_lookups()  # a broken cache stops the command before anything is looked up
    ec2 = session(env, args.profile).client("ec2")
    answer = ec2.describe_availability_zones(Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}])
    zones = sorted(z["ZoneName"] for z in answer["AvailabilityZones"] if z.get("State") == "available")
    path = project.cdk_context_json
    cached[env.context_lookup_key()] = zones
    write_text_atomically(path, json.dumps(dict(sorted(cached.items())), indent=2) + "\n")
    print(f"{env.context_lookup_key()}: {', '.join(zones)} (written to {path.name}; commit it)")
    problems = zone_problems(cached, {env.name: env})
    for problem in problems:
        print(str(problem), file=sys.stderr)
    return 1 if problems else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lookup-zones", help="cache an environment's Availability Zones in cdk.context.json")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--profile", default=None, help="AWS profile (default: the usual boto3 credential chain)")
    p.set_defaults(func=lookup_zones)
