"""Pre-tokenized training data: the shard file format, its writer, and the memory-mapped token windows.

A shard is a 1 KiB header of 256 little-endian int32 (magic, version, token count, vocabulary size)
followed by the tokens as little-endian uint16. Shards are memory-mapped, so a rank only pages in the
windows it reads and a 100 GB data set on FSx costs no RAM up front. Which windows a rank reads, and
which are held out for validation, is `gptlm.sampling`'s business.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gptlm.errors import UserError

MAGIC = 0x47505431  # "GPT1"
VERSION = 1
HEADER_INTS = 256
HEADER_BYTES = HEADER_INTS * 4
TOKEN_DTYPE = np.dtype("<u2")
MAX_VOCAB = int(np.iinfo(TOKEN_DTYPE).max) + 1
BYTE_VOCAB = 256
SHARD_GLOB = "*.bin"


class DataError(UserError, ValueError):
    """Training data that is missing or not in the shard format; the message says what to run."""


def write_shard(path: Path, tokens: np.ndarray, vocab_size: int) -> None:
    """Write one shard atomically (temporary file, then rename), so a reader never sees half a shard."""
    if not 0 < vocab_size <= MAX_VOCAB:
        raise DataError(f"vocab_size {vocab_size} does not fit the uint16 shard format (1..{MAX_VOCAB})")
    tokens = np.asarray(tokens)
    if tokens.size and int(tokens.max()) >= vocab_size:
        raise DataError(f"token id {int(tokens.max())} is outside the vocabulary of {vocab_size}")
    header = np.zeros(HEADER_INTS, dtype="<i4")
    header[:4] = (MAGIC, VERSION, tokens.size, vocab_size)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.astype(TOKEN_DTYPE).tobytes())
    tmp.replace(path)


def shards_from_text_file(text_file: Path, out_dir: Path, tokens_per_shard: int, prefix: str = "train") -> list[Path]:
    """Tokenize a text file of any size into shards, reading one shard's worth of bytes at a time.

    Byte-level tokens are the file's bytes, so chunk boundaries need no care for multi-byte characters.
    """
    if not text_file.is_file():
        raise DataError(f"text file {text_file} does not exist")
    if tokens_per_shard < 1:
        raise DataError("tokens_per_shard must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f"{prefix}_*.bin"):
        stale.unlink()  # a re-run with fewer shards must not leave old ones behind
    paths: list[Path] = []
    with open(text_file, "rb") as f:
        while chunk := f.read(tokens_per_shard):
            path = out_dir / f"{prefix}_{len(paths):06d}.bin"
            write_shard(path, np.frombuffer(chunk, dtype=np.uint8).astype(TOKEN_DTYPE), BYTE_VOCAB)
            paths.append(path)
    if not paths:
        raise DataError(f"text file {text_file} is empty")
    return paths


@dataclass(frozen=True)
class Shard:
    path: Path
    tokens: np.memmap
    vocab_size: int


def open_shard(path: Path) -> Shard:
    with open(path, "rb") as f:
        header = np.frombuffer(f.read(HEADER_BYTES), dtype="<i4")
    if header.size != HEADER_INTS or header[0] != MAGIC:
        raise DataError(f"{path} is not a token shard (bad header); write shards with `python -m trainctl prep-data`")
    if header[1] != VERSION:
        raise DataError(f"{path} has shard format version {header[1]}, this trainer reads version {VERSION}")
    count, vocab = int(header[2]), int(header[3])
    expected = HEADER_BYTES + count * TOKEN_DTYPE.itemsize
    if path.stat().st_size != expected:
        raise DataError(f"{path} is truncated: {path.stat().st_size} bytes, header promises {expected}")
    tokens = np.memmap(path, dtype=TOKEN_DTYPE, mode="r", offset=HEADER_BYTES, shape=(count,))
    return Shard(path=path, tokens=tokens, vocab_size=vocab)


def find_shards(directory: Path) -> list[Path]:
    """Shards anywhere under the channel directory (FSx paths may nest), in a stable order."""
    if not directory.is_dir():
        raise DataError(f"data directory {directory} does not exist")
    paths = sorted(p for p in directory.rglob(SHARD_GLOB) if p.is_file())
    if not paths:
        raise DataError(f"no *.bin token shards under {directory}; write them with `python -m trainctl prep-data`")
    return paths


class TokenWindows:
    """All non-overlapping windows of `seq_len + 1` tokens across the shards (windows never span two shards)."""

    def __init__(self, shards: Iterable[Shard], seq_len: int):
        self.shards = list(shards)
        self.seq_len = seq_len
        self.vocab_size = max(s.vocab_size for s in self.shards)
        counts = np.array([max(len(s.tokens) - 1, 0) // seq_len for s in self.shards], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(counts)])
        self.num_windows = int(self.starts[-1])
        if self.num_windows == 0:
            raise DataError(f"the shards hold fewer than seq_len + 1 = {seq_len + 1} tokens; use more data or "
                            "a smaller seq_len")

    @classmethod
    def from_directory(cls, directory: Path, seq_len: int) -> TokenWindows:
        return cls((open_shard(p) for p in find_shards(directory)), seq_len)

    def window(self, index: int) -> np.ndarray:
        shard = int(np.searchsorted(self.starts, index, side="right")) - 1
        offset = (index - int(self.starts[shard])) * self.seq_len
        return np.asarray(self.shards[shard].tokens[offset:offset + self.seq_len + 1], dtype=np.int64)

    def rows(self, indices: Iterable[int]) -> np.ndarray:
        """The windows stacked into one (len(indices), seq_len + 1) int64 array: a batch's inputs and targets."""
        return np.stack([self.window(int(i)) for i in indices])
