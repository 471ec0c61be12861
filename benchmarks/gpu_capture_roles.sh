#!/usr/bin/env bash
# GPU acceptance of issue 16 (parameters paired by role, configuration roots), for the H200 image (torch + Triton
# installed; irdiff from this checkout):
#
#   bash benchmarks/gpu_capture_roles.sh
#
# Captures benchmarks/gpu_rmsnorm_program.py (fused RMSNorm + residual under torch.compile) with dynamic=False and
# dynamic=True (fresh TorchInductor/Triton caches: every kernel compiled, the autotuner runs each time), runs
# `irdiff diff` on the two captures, then benchmarks/gpu_capture_roles.py (PASS/FAIL checks). Results in
# benchmarks/results/gpu_capture_roles/ (and $OUT when set).
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
RES=$ROOT/benchmarks/results/gpu_capture_roles
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never IRDIFF_COLOR=never
rm -rf "$RES" && mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
SCRATCH=$(mktemp -d /tmp/irdiff-gpu-roles.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
for pair in "static false" "dynamic true"; do
    set -- $pair
    export TORCHINDUCTOR_CACHE_DIR="$SCRATCH/$1/inductor" TRITON_CACHE_DIR="$SCRATCH/$1/triton"
    echo "== irdiff capture $1 (dynamic=$2)"
    $PY -m irdiff capture -o "$RES/$1" --force -- $PY benchmarks/gpu_rmsnorm_program.py --dynamic "$2" 2>&1 | tail -5
done
echo "== irdiff diff static dynamic"
$PY -m irdiff diff "$RES/static" "$RES/dynamic" --width 160 >"$RES/diff.txt" 2>&1
head -120 "$RES/diff.txt"
echo "== checks"
$PY benchmarks/gpu_capture_roles.py "$RES/static" "$RES/dynamic" | tee "$RES/checks.txt"
STATUS=${PIPESTATUS[0]}
tar -C "$RES" -czf "$RES/captures.tar.gz" static dynamic && rm -rf "$RES/static" "$RES/dynamic"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$RES"/* "$OUT/" 2>/dev/null; fi
exit $STATUS
