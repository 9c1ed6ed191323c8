#!/usr/bin/env bash
# The trainer's speed targets, checked in one GPU run of about 5 minutes (issue 27):
#   gpt-350m, seq 1024, micro-batch 16, DDP:   tokens/s >= 0.97 x the reference's at the same shape
#   gpt-1.3b, seq 2048, micro-batch 8, FSDP2:  tokens/s >= 0.97 x the reference's, and one checkpoint
#                                              (model + AdamW) blocks training for at most 2 s
# The reference is a plain GPT under one torch.compile (reference_gpt.py, kept beside the checkout in
# ../shared/bench/); pass its path when it lives elsewhere. Results: $OUT (or build/gpu-check) as JSON and
# summary.txt; the exit status is 1 when a target is missed.
#
#   bash bench/gpu_check.sh [path/to/reference_gpt.py]
set -euo pipefail
cd "$(dirname "$0")/.."
reference="${1:-}"
for candidate in "$reference" shared/bench/reference_gpt.py ../shared/bench/reference_gpt.py; do
  if [[ -n "$candidate" && -f "$candidate" ]]; then reference="$candidate"; break; fi
done
if [[ -z "$reference" || ! -f "$reference" ]]; then
  echo "gpu_check: reference_gpt.py not found; pass its path as the first argument" >&2
  exit 2
fi
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "gpu_check: no CUDA GPU here")'
out="${OUT:-build/gpu-check}"
mkdir -p "$out"
export PYTHONPATH="training:.${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

python3 bench/train_throughput.py --model gpt-350m --seq-len 1024 --micro-batch-size 16 --modes ddp \
  --json "$out/trainer-350m.json" | tee "$out/trainer-350m.txt"
python3 "$reference" 1024 24 16 1024 | tee "$out/reference-350m.txt"
python3 bench/train_throughput.py --model gpt-1.3b --seq-len 2048 --micro-batch-size 8 --modes fsdp \
  --json "$out/trainer-1.3b.json" | tee "$out/trainer-1.3b.txt"
python3 "$reference" 2048 24 8 2048 | tee "$out/reference-1.3b.txt"

python3 bench/gpu_check_summary.py "$out" | tee "$out/summary.txt"
