"""tests/moto_fixes.py: a stopped program stays stopped; an error of a running program is still an error."""

from __future__ import annotations

import datetime
import threading
from types import SimpleNamespace

from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramError, ProgramRunning, ProgramStopped


def _program(state: object) -> SimpleNamespace:
    return SimpleNamespace(_state_mutex=threading.RLock(), _program_state=state, _frames=[],
                           program_state_event=threading.Event())


def test_an_error_after_a_stop_leaves_the_execution_stopped() -> None:
    stopped = ProgramStopped(stop_date=datetime.datetime.now(tz=datetime.UTC), cause=None, error=None)
    program = _program(stopped)
    Environment.set_error(program, {"error": "States.Runtime", "cause": "Could not set NextState value"})
    assert program._program_state is stopped


def test_an_error_of_a_running_program_is_still_reported() -> None:
    program = _program(ProgramRunning())
    Environment.set_error(program, {"error": "States.TaskFailed", "cause": "boom"})
    assert isinstance(program._program_state, ProgramError)
