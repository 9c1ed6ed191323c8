"""Where a workload's runs live in AWS: its state machine `<env>-<workload>` in the account and region cdk.json
pins for the environment, and every ARN and console link that follows from them."""

from __future__ import annotations

from dataclasses import dataclass

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.inputs.environments import TRAINING_LOG_GROUP, Environment
from compiler.inputs.project import Project
from compiler.spec import load_workload
from trainctl.common.errors import problem
from trainctl.common.lookup import environment

_CONSOLE = {"aws": "console.aws.amazon.com", "aws-cn": "console.amazonaws.cn",
            "aws-us-gov": "console.amazonaws-us-gov.com"}


@dataclass(frozen=True)
class Target:
    """One workload's state machine in one environment: every ARN and console link follows from it."""

    env: Environment
    workload: str

    @property
    def machine_name(self) -> str:
        return sm.state_machine_name(self.env.name, self.workload)

    @property
    def machine_arn(self) -> str:
        return f"arn:{self.env.partition}:states:{self.env.region}:{self.env.account}:stateMachine:{self.machine_name}"

    def execution_arn(self, name: str) -> str:
        return f"arn:{self.env.partition}:states:{self.env.region}:{self.env.account}:execution:{self.machine_name}:{name}"

    def run_argument(self, execution_arn: str) -> str:
        """How to name this run on the command line again: `WORKLOAD/NAME --env ENV`."""
        return f"{self.workload}/{execution_arn.rsplit(':', 1)[-1]} --env {self.env.name}"

    def _console(self, service: str) -> str:
        host = _CONSOLE.get(self.env.partition, _CONSOLE["aws"])
        return f"https://{self.env.region}.{host}/{service}/home?region={self.env.region}"

    def execution_link(self, execution_arn: str) -> str:
        return f"{self._console('states')}#/v2/executions/details/{execution_arn}"

    def job_link(self, job_name: str) -> str:
        return f"{self._console('sagemaker')}#/jobs/{job_name}"

    def logs_link(self, job_name: str) -> str:
        return (f"{self._console('cloudwatch')}#logStream:group={TRAINING_LOG_GROUP};prefix={job_name};"
                "streamFilter=typeLogStreamPrefix")

    def not_deployed(self) -> SpecError:
        return problem(f"workload {self.workload} is not deployed to {self.env.name}: there is no state machine "
                       f"{self.machine_name} in account {self.env.account}, {self.env.region}. Deploy it with "
                       f"`npx cdk deploy '{self.env.name}/*'`")


def workload_target(project: Project, workload: str, env_name: str) -> Target:
    """The target of a workload named on the command line (its spec must exist and deploy to the environment)."""
    env = environment(project, env_name)
    return Target(env, load_workload(project, workload, env).name)
