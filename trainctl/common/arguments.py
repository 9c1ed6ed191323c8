"""argparse types for paths typed on the command line: a text the file system would refuse outright (a name longer
than it allows, a NUL) is a usage error naming the option, as argparse reports any other bad argument, not the
OSError the first look at it would raise."""

from __future__ import annotations

import argparse
from pathlib import Path

from compiler.inputs.paths import unusable


def path_text(text: str) -> str:
    """A path argument, kept as typed."""
    refusal = unusable(text)
    if refusal is not None:
        raise argparse.ArgumentTypeError(refusal)
    return text


def path_arg(text: str) -> Path:
    """A path argument, as a Path."""
    return Path(path_text(text))
