"""`prep-data`: the token shards the trainer reads, from the corpus that ships with trainctl (trainctl/data/corpus.txt)
or any text file; run-local prepares the shipped corpus on first use."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compiler.inputs.project import Project
from trainctl.common.lookup import project_of

SHIPPED_CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus.txt"  # package data of trainctl
DATA_DIR = Path("build") / "data" / "corpus"  # relative to the project
DEFAULT_TOKENS_PER_SHARD = 1 << 20


def prep_data(args: argparse.Namespace) -> int:
    from gptlm import shards  # numpy: imported by the commands that need it, not by every trainctl command

    output = args.output or project_of(args).root / DATA_DIR
    try:
        paths = shards.shards_from_text_file(args.input, output, args.tokens_per_shard)
    except shards.DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tokens = sum((p.stat().st_size - shards.HEADER_BYTES) // shards.TOKEN_DTYPE.itemsize for p in paths)
    print(f"wrote {len(paths)} shard(s), {tokens} tokens, to {output}")
    return 0


def ensure_default_data(project: Project) -> Path:
    """The shipped corpus as shards in the project's build folder, written on first use."""
    from gptlm import shards

    folder = project.root / DATA_DIR
    if not list(folder.glob("*.bin")):
        shards.shards_from_text_file(SHIPPED_CORPUS, folder, DEFAULT_TOKENS_PER_SHARD)
    return folder
