"""Command line for people and reviewers: validate and render workloads, run them locally, summarize a synth.

Standard output carries only the command's result (JSON for `render`), so it can be piped;
logs and warnings go to standard error.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m trainctl", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from trainctl import commands, local, summary

    for module in (commands, local, summary):  # each registers its subcommands
        module.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
