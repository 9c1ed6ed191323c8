"""Files the project writes (cdk.context.json, a region's price table, the compile's warnings beside a synthesized
cloud assembly): replaced in one step.

A command stopped midway (Ctrl-C, a crash, a full disk) must not leave a half-written JSON file that synth then
fails to read: the new text goes to a temporary file beside the target, is flushed to disk, and takes the target's
place with one rename (`os.replace`, atomic on POSIX within a file system). Until then the old file stays whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_text_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text`, or leave it as it was (and no temporary file) if anything stops the write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _mode_for(path: Path) -> int:
    """The file's own permissions if it exists, else what a plain open() would give (mkstemp makes 0600)."""
    if path.exists():
        return stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
