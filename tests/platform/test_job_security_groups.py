"""Each workload's jobs run in a security group of their own: EFA's all-traffic self rules reach only its own nodes.

Read from the session's synthesized app (both environments, every workload stack). The shipped workloads and which
of them reads FSx are literals from workloads/*.yaml; the Lustre ports (TCP 988, 1018-1023) are the FSx for Lustre
User Guide's ("File system access control with Amazon VPC").
"""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import cx_api

from platform_constructs.network import TrainingNetwork

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")
WORKLOADS = {"gpt-finetune-single", "gpt-horovod-mpi", "gpt-smddp", "gpt-smp-v1", "gpt-torchrun-fsx", "platform-smoke",
             "platform-smoke-gpu", "xgboost-tabular", "sklearn-tabular", "linear-learner-tabular"}
# The shipped workloads that ship code (a built-in algorithm runs its own: no code bundle, no code channel).
WITH_CODE = WORKLOADS - {"linear-learner-tabular"}
READS_FSX = {"gpt-torchrun-fsx", "platform-smoke", "platform-smoke-gpu"}
LUSTRE_PORTS = [988, *range(1018, 1024)]


def workload_stacks(app, env: str) -> dict[str, dict[str, Any]]:
    return {sid: t for sid, t in app.templates[env].items() if sid.startswith("Workloads")}


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def job_groups(app, env: str) -> dict[str, tuple[str, str]]:
    """Workload name -> (stack id, logical id) of its job group."""
    found = {}
    for sid, template in workload_stacks(app, env).items():
        for logical, group in of_type(template, "AWS::EC2::SecurityGroup").items():
            description = group["Properties"]["GroupDescription"]
            assert description.startswith("Training jobs of workload "), description
            name = description.removeprefix("Training jobs of workload ").split(":")[0]
            assert name not in found
            found[name] = (sid, logical)
    return found


def exported(app, env: str, stack: str, description_word: str) -> dict[str, Any]:
    """The Fn::ImportValue another stack uses for the Network stack's group whose description holds a word."""
    network = app.templates[env][stack]
    logical = next(k for k, v in of_type(network, "AWS::EC2::SecurityGroup").items()
                   if description_word in v["Properties"]["GroupDescription"])
    for output in network.get("Outputs", {}).values():
        if output["Value"] == {"Fn::GetAtt": [logical, "GroupId"]} and "Export" in output:
            return {"Fn::ImportValue": output["Export"]["Name"]}
    raise AssertionError(f"no export of {logical}")


def rules(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in of_type(template, f"AWS::EC2::SecurityGroup{kind}").values()]


def covers(rule: dict[str, Any], port: int) -> bool:
    return rule["IpProtocol"] == "-1" or (rule["IpProtocol"] == "tcp" and rule["FromPort"] <= port <= rule["ToPort"])


@pytest.mark.parametrize("env", ENVS)
def test_every_workload_has_one_group_with_efa_self_rules_only_for_itself(synthesized_app, env: str) -> None:
    groups = job_groups(synthesized_app, env)
    assert set(groups) == WORKLOADS
    for sid, logical in groups.values():
        template = workload_stacks(synthesized_app, env)[sid]
        me = {"Fn::GetAtt": [logical, "GroupId"]}
        ingress, egress = rules(template, "Ingress"), rules(template, "Egress")
        assert any(r["GroupId"] == me and r.get("SourceSecurityGroupId") == me and r["IpProtocol"] == "-1" for r in ingress)
        assert any(r["GroupId"] == me and r.get("DestinationSecurityGroupId") == me and r["IpProtocol"] == "-1"
                   for r in egress)
        # all traffic is allowed only with the group itself
        assert all(r.get("SourceSecurityGroupId") == me for r in ingress if r["GroupId"] == me and r["IpProtocol"] == "-1")
        assert all(r.get("DestinationSecurityGroupId") == me for r in egress if r["GroupId"] == me and r["IpProtocol"] == "-1")
        inline = template["Resources"][logical]["Properties"]
        assert [{k: v for k, v in r.items() if k != "Description"} for r in inline["SecurityGroupEgress"]] == [
            {"CidrIp": "0.0.0.0/0", "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443}]
        assert not inline.get("SecurityGroupIngress")


@pytest.mark.parametrize("env", ENVS)
def test_no_workload_group_is_shared_or_referenced_by_another_stack(synthesized_app, env: str) -> None:
    for template in workload_stacks(synthesized_app, env).values():
        assert not [o for o in template.get("Outputs", {}).values() if "Export" in o]  # nothing to import elsewhere
    text = json.dumps({sid: t for sid, t in synthesized_app.templates[env].items() if not sid.startswith("Workloads")})
    assert "JobSecurityGroup" not in text


@pytest.mark.parametrize("env", ENVS)
def test_each_state_machine_starts_jobs_in_its_own_group(synthesized_app, env: str) -> None:
    groups = job_groups(synthesized_app, env)
    for name, (sid, logical) in groups.items():
        template = workload_stacks(synthesized_app, env)[sid]
        machines = [m["Properties"] for m in of_type(template, "AWS::StepFunctions::StateMachine").values()
                    if m["Properties"]["StateMachineName"].endswith(name)]
        (machine,) = machines
        assert machine["DefinitionSubstitutions"]["TrainingSecurityGroupId"] == {"Fn::GetAtt": [logical, "GroupId"]}


@pytest.mark.parametrize("env", ENVS)
def test_the_file_system_admits_exactly_the_workloads_that_read_it(synthesized_app, env: str) -> None:
    fs = exported(synthesized_app, env, "Network", "FSx")
    for name, (sid, logical) in job_groups(synthesized_app, env).items():
        template = workload_stacks(synthesized_app, env)[sid]
        job = {"Fn::GetAtt": [logical, "GroupId"]}
        ingress, egress = rules(template, "Ingress"), rules(template, "Egress")
        # this workload's rules with the file system (a stack may hold other workloads' groups and rules too)
        with_fs = [r for r in ingress + egress if fs in (r["GroupId"], r.get("SourceSecurityGroupId"),
                                                         r.get("DestinationSecurityGroupId"))
                   and job in (r["GroupId"], r.get("SourceSecurityGroupId"), r.get("DestinationSecurityGroupId"))]
        if name not in READS_FSX:
            assert with_fs == [], name
            continue
        for port in LUSTRE_PORTS:
            assert any(r["GroupId"] == fs and r.get("SourceSecurityGroupId") == job and covers(r, port) for r in ingress)
            assert any(r["GroupId"] == fs and r.get("DestinationSecurityGroupId") == job and covers(r, port) for r in egress)
            assert any(r["GroupId"] == job and r.get("DestinationSecurityGroupId") == fs and covers(r, port) for r in egress)
            assert any(r["GroupId"] == job and r.get("SourceSecurityGroupId") == fs and covers(r, port) for r in ingress)
        assert not any(covers(r, 22) or covers(r, 443) for r in with_fs)  # Lustre ports only


@pytest.mark.parametrize("env", ENVS)
def test_the_endpoints_admit_each_workload_group_on_443_only(synthesized_app, env: str) -> None:
    endpoints = exported(synthesized_app, env, "Network", "Interface endpoints")
    for sid, logical in job_groups(synthesized_app, env).values():
        template = workload_stacks(synthesized_app, env)[sid]
        job = {"Fn::GetAtt": [logical, "GroupId"]}
        admitted = [r for r in rules(template, "Ingress") if r["GroupId"] == endpoints]
        mine = [r for r in admitted if r["SourceSecurityGroupId"] == job]  # a stack may hold several workloads
        assert [(r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in mine] == [("tcp", 443, 443)]
        assert all((r["IpProtocol"], r["FromPort"], r["ToPort"]) == ("tcp", 443, 443) for r in admitted)


@pytest.mark.parametrize("env", ENVS)
def test_only_a_workloads_role_may_put_interfaces_in_its_group(synthesized_app, env: str) -> None:
    access = json.dumps(synthesized_app.templates[env]["Access"])
    assert "security-group/" not in access  # the shared policy grants the interface and the subnet only
    for sid, logical in job_groups(synthesized_app, env).values():
        template = workload_stacks(synthesized_app, env)[sid]
        own = [s for p in of_type(template, "AWS::IAM::Policy").values()
               for s in p["Properties"]["PolicyDocument"]["Statement"] if s.get("Sid") == "OwnJobSecurityGroup"]
        mine = [s for s in own if json.dumps({"Fn::GetAtt": [logical, "GroupId"]}) in json.dumps(s["Resource"])]
        assert len(mine) == 1 and mine[0]["Action"] == "ec2:CreateNetworkInterface"
        assert "security-group/" in json.dumps(mine[0]["Resource"])


def test_the_lustre_guard_reads_rules_in_the_job_groups_own_stack() -> None:
    """A job group in another stack whose rules CDK cannot add (an immutable import) fails synth, naming the rule."""
    account, region = "123456789012", "us-east-1"
    app = cdk.App(context={f"availability-zones:account={account}:region={region}": ["us-east-1a", "us-east-1b"]})
    net = cdk.Stack(app, "Net", env=cdk.Environment(account=account, region=region))
    jobs = cdk.Stack(app, "Jobs", env=cdk.Environment(account=account, region=region))
    network = TrainingNetwork(net, "Network", availability_zone="us-east-1a", training_subnet_mask=25)
    frozen = ec2.SecurityGroup.from_security_group_id(jobs, "Frozen", "sg-0123456789abcdef0", mutable=False)
    network.job_security_group(jobs, "JobGroup", workload="w", security_group=frozen)
    with pytest.raises(Exception) as caught:
        app.synth()
    errors = str(caught.value)
    assert "Lustre port(s) 988, 1018-1023 not allowed for jobs -> file system" in errors
    assert "lacks the EFA self-rule(s) for ingress and egress" in errors


def _warnings(app: cdk.App) -> list[str]:
    assembly = app.synth()
    return [str(m.entry.data) for stack in assembly.stacks for m in stack.messages
            if m.level == cx_api.SynthesisMessageLevel.WARNING]


@pytest.mark.parametrize(("workloads", "warned"), [(60, False), (61, True)])
def test_more_workloads_than_the_endpoint_groups_default_rule_quota_warn(workloads: int, warned: bool) -> None:
    """60 inbound rules per security group by default (Amazon VPC quotas): the 61st workload is warned about."""
    account, region = "123456789012", "us-east-1"
    app = cdk.App(context={f"availability-zones:account={account}:region={region}": ["us-east-1a", "us-east-1b"]})
    stack = cdk.Stack(app, "Net", env=cdk.Environment(account=account, region=region))
    network = TrainingNetwork(stack, "Network", availability_zone="us-east-1a", training_subnet_mask=24, lustre=False)
    for index in range(workloads):
        network.job_security_group(stack, f"Job{index}", workload=f"w{index}", lustre=False)
    found = [w for w in _warnings(app) if "endpoints security group now admits more than 60 rules" in w]
    assert bool(found) is warned
