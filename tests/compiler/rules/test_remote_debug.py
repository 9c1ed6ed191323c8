"""Remote debugging only with a reason (compiler/rules/remote_debug.py): a job with it takes shell sessions from
whoever the account's IAM allows ssm:StartSession, outside the platform's roles."""

from __future__ import annotations

from compiler.inputs.reader import Findings
from compiler.rules.remote_debug import remote_debug_only_with_a_reason

REASON = "a shell in a hung job to read its NCCL state"


def findings(make, **changes) -> Findings:
    """The rule's findings on the base spec with `changes` (a change the rule refuses raises in make() already)."""
    found = Findings("demo.yaml")
    remote_debug_only_with_a_reason(make(**changes), found)
    return found


def test_remote_debugging_without_a_reason_is_refused_naming_the_key(rejects) -> None:
    rejects("enable_remote_debug", "ssm:StartSession", "say why in remote_debug_reason", "or remove "
            "enable_remote_debug", enable_remote_debug=True)


def test_with_a_reason_it_passes_with_a_warning_that_no_session_can_connect(make) -> None:
    found = findings(make, enable_remote_debug=True, remote_debug_reason=REASON)
    assert found.problems == []
    assert [(w.field, "ssmmessages" in w.message) for w in found.warnings] == [("enable_remote_debug", True)]
    assert make(enable_remote_debug=True, remote_debug_reason=REASON).remote_debug_reason == REASON


def test_off_or_left_out_needs_no_reason(make) -> None:
    for changes in ({}, {"enable_remote_debug": False}):
        found = findings(make, **changes)
        assert (found.problems, found.warnings) == ([], [])


def test_a_reason_without_remote_debugging_is_pointed_out(make) -> None:
    found = findings(make, remote_debug_reason=REASON)
    assert found.problems == []
    assert [w.field for w in found.warnings] == ["remote_debug_reason"]


def test_the_reason_is_no_part_of_the_request(make) -> None:
    from compiler.compilation.request import compile_request
    from tests.project import ENVIRONMENTS

    request = compile_request(make(enable_remote_debug=True, remote_debug_reason=REASON), ENVIRONMENTS["dev"],
                              training_image="x")
    assert request["RemoteDebugConfig"] == {"EnableRemoteDebug": True}
    assert REASON not in str(request)
