"""Command line for people and reviewers: validate and render workloads, run them locally, summarize a synth.

Standard output carries only the command's result (JSON for `render`), so it can be piped;
logs and warnings go to standard error.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

# Subcommand modules beyond validate/render; each exposes add_commands(subparsers).
_PLUGINS = ("training.local", "training.review")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from training import commands

    commands.add_commands(sub)
    for module_name in _PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
