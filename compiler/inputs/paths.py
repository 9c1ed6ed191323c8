"""What a path written in a spec, in cdk.json or on a command line must be before the file system is asked about it,
and the one refusal of a file the user cannot read.

Some texts are not paths at all to the operating system: a NUL byte ends a C string, a name longer than the file
system allows is refused with ENAMETOOLONG, a lone UTF-16 surrogate has no UTF-8 bytes. Python raises for each
(ValueError, OSError, UnicodeEncodeError) where a missing file would only be "no such file", so the readers check
the text here first and report one problem that names the field, like any other bad value.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

MAX_PATH_BYTES = 1024  # the whole path as written: macOS's PATH_MAX, and far beyond any folder of a repository
MAX_NAME_BYTES = 255  # one name in the path: the limit of ext4, XFS, APFS and most other file systems


def unusable(text: str) -> str | None:
    """Why `text` cannot name a file (None: the file system can be asked about it)."""
    if "\x00" in text:
        return "is not a usable path: it holds a NUL character"
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not a usable path: it is not valid UTF-8 text"
    if size > MAX_PATH_BYTES:
        return f"is not a usable path: it is {size} bytes long, at most {MAX_PATH_BYTES}"
    for name in PurePosixPath(text).parts:
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            return (f"is not a usable path: the name {name[:24]}... is {len(name.encode('utf-8'))} bytes long; a file "
                    f"system allows at most {MAX_NAME_BYTES}")
    return None


def unreadable(path: Path, reader: str = "") -> str | None:
    """Why a file this user cannot read stops validate (None: it can be read): synth would fail reading it, and it is
    often one a container wrote as root. `reader` says who reads it, when that is not plain."""
    if os.access(path, os.R_OK):
        return None
    return (f"{path} cannot be read by you (its owner's permissions){reader}; make it readable (chown or chmod it) or "
            "remove it")
