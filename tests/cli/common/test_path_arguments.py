"""A path typed on the command line that no file system takes (a name of 256 bytes, one past Linux's NAME_MAX) is a
usage error naming the option, exit status 2 as argparse answers any wrong argument: not the OSError the first look
at it raised (`--project-dir`, `validate --directory` and `summary --cdk-out` printed a traceback)."""

from __future__ import annotations

import pytest

from tests.project import ROOT
from trainctl.cli import main

TOO_LONG = "x" * 256


@pytest.mark.parametrize(("argv", "option"), [
    (["--project-dir", TOO_LONG, "validate"], "--project-dir"),
    (["validate", "--directory", TOO_LONG], "--directory"),
    (["summary", "--cdk-out", TOO_LONG], "--cdk-out"),
    (["preflight", "--env", "dev", "--cdk-out", TOO_LONG], "--cdk-out"),
    (["review", "--comment", f"build/{TOO_LONG}"], "--comment"),
    (["prep-data", "--input", TOO_LONG], "--input"),
    (["prep-data", "--output", TOO_LONG], "--output"),
    (["run-local", "gpt-smddp", "--output", TOO_LONG], "--output"),
])
def test_a_path_no_file_system_takes_is_a_usage_error(capsys, argv: list[str], option: str) -> None:
    full = argv if argv[0] == "--project-dir" else ["--project-dir", str(ROOT), *argv]
    with pytest.raises(SystemExit) as exited:
        main(full)
    out, err = capsys.readouterr()
    assert (exited.value.code, out) == (2, "")
    assert err.splitlines()[-1].endswith(f"error: argument {option}: is not a usable path: the name "
                                         "xxxxxxxxxxxxxxxxxxxxxxxx... is 256 bytes long; a file system allows at most 255")


def test_a_name_at_the_limit_is_looked_up(capsys) -> None:
    assert main(["--project-dir", str(ROOT), "summary", "--cdk-out", "x" * 255]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"no cloud assembly in {'x' * 255}: run `npx cdk synth` first (or pass --cdk-out DIR)\n")


def test_a_local_channel_folder_is_held_to_the_same_rule(capsys) -> None:
    assert main(["--project-dir", str(ROOT), "run-local", "gpt-smddp", "--channel", f"train={TOO_LONG}"]) == 2
    assert capsys.readouterr().err == ("error: --channel train=PATH: is not a usable path: the name "
                                       "xxxxxxxxxxxxxxxxxxxxxxxx... is 256 bytes long; a file system allows at most 255\n")
