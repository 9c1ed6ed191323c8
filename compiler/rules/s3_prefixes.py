"""An S3 location a job reads holds none of the characters IAM would read as a wildcard or a policy variable.

The execution role is granted each S3 location a spec names as `<prefix>*` (objects) and `s3:prefix` `<prefix>*`
(listing), so that the role reads exactly what SageMaker reads: every object whose key starts with the prefix, as
written (S3 has no globbing; an `S3Prefix` is compared character by character). In an IAM policy `*` matches any
run of characters, `?` any one, and `${...}` is a policy variable (IAM User Guide, "IAM policy elements: Variables and
tags"; its "Special characters" section gives `${*}`, `${?}` and `${$}` for the literal characters). So a prefix
`datasets/gpt-tokens/*` would grant every key under `datasets/gpt-tokens/` while SageMaker reads only keys that
begin with a literal `*`, and a prefix `*` the whole bucket.

The platform refuses these characters rather than writing IAM's escapes: in a prefix they are almost always a glob
that S3 does not have (the job would read nothing, or not what was meant), and the S3 User Guide lists `$` and `?`
among the key characters that "might require special handling" ("Naming Amazon S3 objects"). A key that truly holds
one is renamed, or read through a prefix that stops before it.
"""

from __future__ import annotations

from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule

# What IAM reads in a Resource or a StringLike value: wildcards, and `$` which opens a policy variable.
IAM_SPECIAL = {"*": "a wildcard for any characters", "?": "a wildcard for any one character",
               "$": "the start of a policy variable (${aws:username})"}


def s3_locations(w: Workload) -> list[tuple[str, str]]:
    """(spec field, key prefix) of every S3 location the workload's jobs read: channels and `model_uri`."""
    return [(where, location.key_prefix) for where, location in w.s3_reads]


def literal_part(prefix: str) -> str:
    """The prefix up to the '/' before its first special character: what a glob there most likely meant."""
    first = min(prefix.index(c) for c in IAM_SPECIAL if c in prefix)
    return prefix[:prefix.rfind("/", 0, first) + 1]


@workload_rule
def s3_prefixes_are_literal(w: Workload, f: Findings) -> None:
    for where, prefix in s3_locations(w):
        found = [c for c in IAM_SPECIAL if c in prefix]
        if not found:
            continue
        meanings = "; ".join(f"'{c}' is {IAM_SPECIAL[c]}" for c in found)
        cut = literal_part(prefix)
        hint = f", e.g. {cut} for every object under it" if cut else ""
        f.problem(where, f"{prefix!r}: an S3 prefix is literal (SageMaker reads every object whose key starts with "
                  f"it, as written: S3 has no globbing), while the role's policy grants it to IAM, where {meanings}, "
                  f"so the role could read more than the channel: write the prefix without {', '.join(found)}{hint}")
