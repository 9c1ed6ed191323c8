"""Compare the trainer's figures with the reference's, from the files `bench/gpu_check.sh` wrote.

Exit 1 when a target is missed: tokens/s at least 0.97 x the reference's at each shape, and a gpt-1.3b checkpoint
that blocks training for at most 2 s. The target is judged on a save after the first: the first also allocates the
pinned staging copy that every later save of the run reuses (its figure is shown beside).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MIN_RATIO = 0.97
MAX_BLOCKING_S = 2.0
# reference_gpt.py prints "<GPU>: params ...: 199,123 tokens/s, MFU ..."
_REFERENCE = re.compile(r"([\d,]+) tokens/s")


def reference_tokens_per_s(text: str) -> float:
    match = _REFERENCE.search(text)
    if match is None:
        raise SystemExit(f"gpu_check: no tokens/s in the reference's output: {text!r}")
    return float(match.group(1).replace(",", ""))


def check(out: Path) -> list[tuple[str, str, bool]]:
    """(what, figures, met) per target."""
    rows = []
    for shape in ("350m", "1.3b"):
        trainer = json.loads((out / f"trainer-{shape}.json").read_text())["results"][0]
        reference = reference_tokens_per_s((out / f"reference-{shape}.txt").read_text())
        ratio = trainer["tokens_per_sec_per_gpu"] / reference
        rows.append((f"gpt-{shape} {trainer['mode']} tokens/s",
                     f"{trainer['tokens_per_sec_per_gpu']:,.0f} vs reference {reference:,.0f} = {ratio:.3f}x "
                     f"(target >= {MIN_RATIO})", ratio >= MIN_RATIO))
        if shape == "1.3b":
            blocking = trainer["checkpoint_blocking_s"]
            rows.append(("gpt-1.3b checkpoint blocking", f"{blocking:.2f} s (the run's first save "
                         f"{trainer['checkpoint_first_blocking_s']:.2f} s), background write "
                         f"{trainer['checkpoint_background_s']:.2f} s (target <= {MAX_BLOCKING_S} s)",
                         blocking <= MAX_BLOCKING_S))
    return rows


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else "build/gpu-check")
    rows = check(out)
    for what, figures, met in rows:
        print(f"{'PASS' if met else 'FAIL'}  {what}: {figures}")
    return 0 if all(met for _, _, met in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
