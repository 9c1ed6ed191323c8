"""Where moto's Step Functions interpreter differs from Step Functions, in ways the tests would otherwise trip on.

- A stopped execution stays ABORTED. After StopExecution, the state that was running cannot set its next state
  ("Could not set NextState value when in state ProgramStopped") and moto reports that error through
  `Environment.set_error`, which overwrites the stopped program with an error: the execution then ends FAILED, at
  random, depending on where the stop found it. Step Functions ends a stopped execution ABORTED (StopExecution, API
  reference: "Stops an execution", status ABORTED).
"""

from __future__ import annotations

from typing import Any

from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramStopped

_moto_set_error = Environment.set_error


def _set_error_unless_stopped(self: Any, error: Any) -> None:
    with self._state_mutex:  # an RLock: set_error takes it again
        if isinstance(self._program_state, ProgramStopped):
            return
        _moto_set_error(self, error)


def install() -> None:
    Environment.set_error = _set_error_unless_stopped  # type: ignore[method-assign]
