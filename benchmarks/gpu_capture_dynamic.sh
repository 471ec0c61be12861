#!/usr/bin/env bash
# GPU acceptance of `irdiff capture` (issue 6), for the H200 image (Python 3.12, torch 2.11, Triton 3.6; irdiff
# from this checkout, no install needed):
#
#   bash benchmarks/gpu_capture_dynamic.sh
#
# 1. environment; the capture GPU tests (tests/test_capture.py -m gpu: launches of JIT kernels recorded);
# 2. the program (benchmarks/gpu_rmsnorm_program.py: fused RMSNorm + residual under torch.compile) run bare,
#    dynamic=False and dynamic=True, for reference times;
# 3. `irdiff capture` of both (fresh TorchInductor and Triton caches each time, so every kernel is compiled);
#    a fallback with --launches 0 and then TORCHINDUCTOR_COMPILE_THREADS=1 if a capture records no kernel;
# 4. `irdiff diff static dynamic` (overview + every pair that differs, findings included);
# 5. benchmarks/gpu_capture_report.py: every kernel of both captures, the pairs, the findings chain, and the
#    acceptance checks (PASS/FAIL);
# 6. overhead: step time of the compiled function bare vs captured (launch sampling on) vs --launches 0.
#
# Everything goes to benchmarks/results/gpu_capture_dynamic/ (log.txt has all of it); when $OUT is set (the device
# tool), log.txt, diff.txt, report.txt, findings.json and captures.tar.gz are copied there too.
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
RES=$ROOT/benchmarks/results/gpu_capture_dynamic
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
export IRDIFF_PAGING=never IRDIFF_COLOR=never
rm -rf "$RES"
mkdir -p "$RES"
exec > >(tee "$RES/log.txt") 2>&1
SCRATCH=$(mktemp -d /tmp/irdiff-gpu-capture.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
PROGRAM="$ROOT/benchmarks/gpu_rmsnorm_program.py"
STATUS=0

section() { printf '\n======== %s ========\n' "$*"; }

fresh_caches() {  # $1: tag — fresh TorchInductor + Triton caches, so kernels are compiled, not loaded
    export TORCHINDUCTOR_CACHE_DIR="$SCRATCH/$1/inductor" TRITON_CACHE_DIR="$SCRATCH/$1/triton"
    mkdir -p "$TORCHINDUCTOR_CACHE_DIR" "$TRITON_CACHE_DIR"
}

json_line() { grep -E '^\{"dynamic"' "$1" | tail -1; }

section "environment"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
$PY - <<'EOF'
import sys, torch, triton
print("python", sys.version.split()[0], sys.executable)
print("torch", torch.__version__, "triton", triton.__version__, "cuda", torch.version.cuda)
print("gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NONE", "cc", torch.cuda.get_device_capability(0) if torch.cuda.is_available() else "")
from importlib.metadata import version
print("click", version("click"), "pygments", version("pygments"), "jinja2", version("jinja2"), "hypothesis", version("hypothesis"))
import torch._inductor.config as c
print("inductor compile_threads", c.compile_threads, "static launcher", getattr(c, "use_static_triton_launcher", getattr(c, "use_static_cuda_launcher", "?")))
EOF
git -C "$ROOT" log -1 --format='irdiff commit %h %s' 2>/dev/null || true

section "1. GPU tests of the capture (pytest -m gpu tests/test_capture.py)"
$PY -m pytest -q -m gpu -p no:cacheprovider tests/test_capture.py 2>&1 | tail -25
echo "pytest exit status: ${PIPESTATUS[0]}"

section "2. the program without irdiff"
for mode in false true; do
    fresh_caches "bare-$mode"
    $PY "$PROGRAM" --dynamic $mode >"$RES/bare-$mode.out" 2>&1
    st=$?
    echo "dynamic=$mode exit status $st: $(json_line "$RES/bare-$mode.out")"
    [ "$st" = 0 ] || tail -20 "$RES/bare-$mode.out"
done

capture() {  # $1: name (static|dynamic), $2: dynamic flag, rest: extra irdiff capture options
    local name=$1 mode=$2
    shift 2
    fresh_caches "cap-$name"
    local t0=$SECONDS
    $PY -m irdiff capture -o "$RES/$name" --force "$@" -- $PY "$PROGRAM" --dynamic "$mode" 2>&1 | tee "$RES/$name.out"
    local st=${PIPESTATUS[0]}
    echo "irdiff capture ($name $*) exit status $st, $((SECONDS - t0)) s wall"
    return "$st"
}

kernels_in() { $PY -c "import json,sys; print(len(json.load(open(sys.argv[1]+'/manifest.json'))['variants']))" "$1" 2>/dev/null || echo 0; }

for pair in "static false" "dynamic true"; do
    set -- $pair
    section "3. irdiff capture: $1 (dynamic=$2)"
    capture "$1" "$2"
    if [ "$(kernels_in "$RES/$1")" = "0" ]; then
        echo "!! no kernel captured: retrying with --launches 0"
        capture "$1" "$2" --launches 0
    fi
    if [ "$(kernels_in "$RES/$1")" = "0" ]; then
        echo "!! still none: retrying with TORCHINDUCTOR_COMPILE_THREADS=1 (compiles in the program's own process)"
        TORCHINDUCTOR_COMPILE_THREADS=1 capture "$1" "$2"
    fi
    echo "kernels captured in $1: $(kernels_in "$RES/$1")"
    ls -la "$RES/$1" "$RES/$1/.capture" 2>&1 | head -40
    if [ -s "$RES/$1/.capture/errors.log" ]; then
        echo "--- $1/.capture/errors.log"
        tail -60 "$RES/$1/.capture/errors.log"
    fi
done

section "4. irdiff diff static dynamic"
$PY -m irdiff diff "$RES/static" "$RES/dynamic" --width 160 >"$RES/diff.txt" 2>&1
echo "irdiff diff exit status $?"
cat "$RES/diff.txt"
echo "--- side by side, ttgir and ptx only"
$PY -m irdiff diff "$RES/static" "$RES/dynamic" --width 200 -s --stage ttgir,ptx 2>&1 | head -200

section "5. report and acceptance checks"
$PY benchmarks/gpu_capture_report.py "$RES/static" "$RES/dynamic" 2>&1 | tee "$RES/report.txt"
REPORT_STATUS=${PIPESTATUS[0]}
echo "report exit status $REPORT_STATUS (0: every acceptance check passed)"
[ "$REPORT_STATUS" = 0 ] || STATUS=1

section "6. overhead on the program's own timings (compile_s: first call, step_us: per call)"
capture static-nolaunch false --launches 0 --no-explain >/dev/null 2>&1
echo "program                          json"
for f in bare-false static static-nolaunch bare-true dynamic; do
    printf '%-32s %s\n' "$f" "$(json_line "$RES/$f.out")"
done
for d in static dynamic static-nolaunch; do
    [ -f "$RES/$d/capture.json" ] && $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'program_seconds', d['program_seconds'], 'finalize_seconds', d['finalize_seconds'], 'kernels', len(d['kernels']), 'processes', d['processes'], 'warnings', d['warnings'])" "$RES/$d/capture.json" "$d"
done

section "files"
rm -rf "$RES/static-nolaunch"
tar -C "$RES" -czf "$SCRATCH/captures.tar.gz" static dynamic 2>/dev/null && ls -la "$SCRATCH/captures.tar.gz"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    cp "$RES/diff.txt" "$RES/report.txt" "$OUT/" 2>/dev/null
    cp "$RES/findings.json" "$OUT/" 2>/dev/null
    cp "$SCRATCH/captures.tar.gz" "$OUT/" 2>/dev/null
    echo "copied results to \$OUT=$OUT"
fi
echo "results in $RES; overall status $STATUS"
sleep 1
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$RES/log.txt" "$OUT/" 2>/dev/null; fi
exit $STATUS
