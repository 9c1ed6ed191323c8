"""bench/gpu_check_summary.py: the issue-27 targets at their boundaries, read from the files the check writes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check_summary", REPO / "bench" / "gpu_check_summary.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


summary = _load()

# The line reference_gpt.py prints (its f-string, filled in as on the H200 of FACTS section 8).
REFERENCE_LINE = ("NVIDIA H200: params 354M d=1024 L=24 B=16 T=1024: 200,000 tokens/s, MFU 48.9% (peak 989 TFLOP/s), "
                  "mem 30.1 GiB, loss 10.83\n")


def _write(out: Path, tps_350m: float, tps_13b: float, blocking: float, first: float = 9.0) -> None:
    for shape, tps, mode in (("350m", tps_350m, "ddp"), ("1.3b", tps_13b, "fsdp")):
        result = {"mode": mode, "tokens_per_sec_per_gpu": tps, "checkpoint_blocking_s": blocking,
                  "checkpoint_first_blocking_s": first, "checkpoint_background_s": 20.0}
        (out / f"trainer-{shape}.json").write_text(json.dumps({"results": [result]}))
        (out / f"reference-{shape}.txt").write_text(REFERENCE_LINE)


def test_reads_the_reference_line() -> None:
    assert summary.reference_tokens_per_s(REFERENCE_LINE) == 200_000.0


@pytest.mark.parametrize(("tps", "blocking", "code"), [
    (194_000.0, 2.0, 0),   # exactly 0.97x and exactly 2 s: met
    (193_999.0, 2.0, 1),   # just under 0.97x
    (194_000.0, 2.01, 1),  # blocks just over 2 s
])
def test_targets_at_their_boundaries(tmp_path: Path, tps: float, blocking: float, code: int,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, tps, tps, blocking)
    assert summary.main(["gpu_check_summary.py", str(tmp_path)]) == code
    printed = capsys.readouterr().out
    assert printed.count("PASS") + printed.count("FAIL") == 3


def test_the_first_save_is_shown_but_a_later_one_is_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The run's first save also allocates the staging copy every later save reuses: shown, not judged."""
    _write(tmp_path, 200_000.0, 200_000.0, blocking=1.5, first=9.0)
    assert summary.main(["gpu_check_summary.py", str(tmp_path)]) == 0
    assert "PASS  gpt-1.3b checkpoint blocking: 1.50 s (the run's first save 9.00 s)" in capsys.readouterr().out


def test_a_reference_without_figures_is_a_clear_error(tmp_path: Path) -> None:
    _write(tmp_path, 1.0, 1.0, 0.0)
    (tmp_path / "reference-350m.txt").write_text("Traceback: CUDA out of memory\n")
    with pytest.raises(SystemExit, match="no tokens/s in the reference"):
        summary.main(["gpu_check_summary.py", str(tmp_path)])
