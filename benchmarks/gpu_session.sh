#!/usr/bin/env bash
# One device call for the GPU checks that need an H200 (run from the repository root; irdiff from the checkout):
#   1. every GPU test (pytest -m gpu);
#   2. the main job as a user runs it on a GPU machine (compile, diff, findings, timing) + HTML/Markdown reports;
#   3. the capture acceptance (benchmarks/gpu_capture_dynamic.sh).
# Output under $OUT (or benchmarks/results/gpu_session/).
set -u -o pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
DEST=${OUT:-$PWD/benchmarks/results/gpu_session}
mkdir -p "$DEST"
{
  echo "== environment"; date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys,torch,triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  echo "== 1. pytest -m gpu"
  python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -30
} >"$DEST/gpu_tests.txt" 2>&1
{
  echo '$ irdiff matmul --variant annotated --against unannotated --color never --html matmul.html --md matmul.md'
  python3 -m irdiff matmul --variant annotated --against unannotated --color never \
    --html "$DEST/matmul.html" --md "$DEST/matmul.md" --force
  echo "[exit status $?]"
} >"$DEST/main_job.txt" 2>&1
bash benchmarks/gpu_capture_dynamic.sh >/dev/null 2>&1
echo "capture script exit status $?" >>"$DEST/gpu_tests.txt"
