"""Token shards round-trip, reject damage with a clear message, and windows are consecutive tokens."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from gptlm import shards
from gptlm.shards import DataError, TokenWindows

from tests.trainer.conftest import CORPUS
from trainctl.local import command


def test_prep_data_command_writes_the_file_bytes_as_tokens(tmp_path: Path):
    parser = argparse.ArgumentParser()
    command.add_commands(parser.add_subparsers())
    out = tmp_path / "tokens"
    args = parser.parse_args(["prep-data", "--input", str(CORPUS), "--output", str(out), "--tokens-per-shard", "5000"])
    assert args.func(args) == 0
    paths = sorted(out.glob("*.bin"))
    raw = CORPUS.read_bytes()
    assert len(paths) == -(-len(raw) // 5000)
    tokens = np.concatenate([np.asarray(shards.open_shard(p).tokens) for p in paths])
    assert bytes(tokens.astype(np.uint8)) == raw
    assert {shards.open_shard(p).vocab_size for p in paths} == {256}


def test_prep_data_rerun_with_bigger_shards_leaves_no_stale_files(tmp_path: Path):
    shards.shards_from_text_file(CORPUS, tmp_path, 1000)
    shards.shards_from_text_file(CORPUS, tmp_path, 100_000)
    assert [p.name for p in tmp_path.glob("*.bin")] == ["train_000000.bin"]


def test_prep_data_missing_input_is_an_error_not_a_traceback(tmp_path: Path, capsys):
    parser = argparse.ArgumentParser()
    command.add_commands(parser.add_subparsers())
    args = parser.parse_args(["prep-data", "--input", str(tmp_path / "nope.txt"), "--output", str(tmp_path)])
    assert args.func(args) == 2
    assert "does not exist" in capsys.readouterr().err


def test_damaged_shards_are_refused(tmp_path: Path):
    good = tmp_path / "a.bin"
    shards.write_shard(good, np.arange(100) % 256, 256)
    truncated = tmp_path / "b.bin"
    truncated.write_bytes(good.read_bytes()[:-10])
    with pytest.raises(DataError, match="truncated"):
        shards.open_shard(truncated)
    foreign = tmp_path / "c.bin"
    foreign.write_bytes(b"\0" * 2048)
    with pytest.raises(DataError, match="not a token shard"):
        shards.open_shard(foreign)
    with pytest.raises(DataError, match="outside the vocabulary"):
        shards.write_shard(tmp_path / "d.bin", np.array([300]), 256)


def test_empty_channel_points_at_prep_data(tmp_path: Path):
    with pytest.raises(DataError, match="prep-data"):
        TokenWindows.from_directory(tmp_path, 64)


def test_windows_are_consecutive_tokens_and_never_span_shards(tmp_path: Path):
    shards.write_shard(tmp_path / "train_000000.bin", np.arange(0, 50), 256)  # 49 usable -> 4 windows of 10+1
    shards.write_shard(tmp_path / "train_000001.bin", np.arange(100, 125), 256)  # 24 usable -> 2 windows
    windows = TokenWindows.from_directory(tmp_path, 10)
    assert windows.num_windows == 6
    assert windows.window(0).tolist() == list(range(0, 11))
    assert windows.window(3).tolist() == list(range(30, 41))
    assert windows.window(4).tolist() == list(range(100, 111))
    assert windows.window(5).tolist() == list(range(110, 121))
    assert windows.rows([5, 0]).tolist() == [list(range(110, 121)), list(range(0, 11))]
