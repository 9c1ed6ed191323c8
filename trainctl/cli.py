"""`trainctl`: the platform's command line (also `python -m trainctl`).

Standard output carries only a command's result (JSON for `render`, Markdown for `summary` and `review`), so it can
be piped; progress, warnings and problems go to standard error. A problem with the user's input is a message and
exit status 1 (2 for wrong usage), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from compiler.errors import SpecError, show_project_warnings
from trainctl.common.arguments import path_text
from trainctl.common.lookup import UnknownEnvironment
from trainctl.local import command as local
from trainctl.preflight import command as preflight
from trainctl.project import prices, specs, summary, zones
from trainctl.review import command as review
from trainctl.run import commands as runs
from trainctl.smoke import command as smoke

MODULES = (specs, local, summary, review, zones, runs, preflight, smoke, prices)  # in `trainctl --help`, in this order


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainctl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project-dir", default=None, type=path_text,
                        help="the project (folder with cdk.json); default: found from the working directory")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in MODULES:  # each registers its subcommands
        module.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UnknownEnvironment as error:  # a wrong `--env`: wrong usage, as argparse answers a wrong argument
        print(str(error), file=sys.stderr)
        return 2
    except SpecError as error:
        print(str(error), file=sys.stderr)  # its problems show their controls, never obey them (Problem.__str__)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run() -> None:
    """The `trainctl` command and `python -m trainctl`: `main`, with warnings about the project in the form the
    compiled rules' warnings take (`warning: <text>`), not Python's (a file and line of this code)."""
    show_project_warnings()
    sys.exit(main())
