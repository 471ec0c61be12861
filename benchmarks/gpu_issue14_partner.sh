#!/usr/bin/env bash
# Issue 14, partner-independent settling (run from the repository root, one device call, ~6 min expected):
#   bash benchmarks/gpu_issue14_partner.sh OUTDIR       (device tool: carry [".whl"], timeout_s 600)
# env.txt (GPU, driver, versions), bench_agreement.{txt,json} (benchmarks/bench_agreement.py: runner vs do_bench,
# tiled beside two partners and alone, run to run; written after every case, so a cut-short call keeps what ran),
# pytest.txt (the GPU tests of the block logic and the runner, where hypothesis is installed).
set -u
OUT=${1:?usage: gpu_issue14_partner.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
$PY -c 'import pynvml, jsonschema, rapidfuzz' 2>/dev/null || $PY -m pip install -q --no-index .whl/*.whl >/dev/null 2>&1
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
  $PY -c 'import pynvml; pynvml.nvmlInit(); print("nvml driver", pynvml.nvmlSystemGetDriverVersion())' 2>&1 | tail -1
  echo "\$ PYTHONPATH=. python3 benchmarks/bench_agreement.py --out \$OUT"
} >"$OUT/env.txt" 2>&1
t0=$SECONDS
timeout 470 $PY benchmarks/bench_agreement.py --out "$OUT" >"$OUT/bench_stdout.log" 2>&1
echo "bench_agreement exit $? after $((SECONDS - t0)) s" >>"$OUT/env.txt"
tail -5 "$OUT/bench_stdout.log" >>"$OUT/env.txt"
rm -f "$OUT/bench_stdout.log"
if $PY -c 'import hypothesis' 2>/dev/null; then
  timeout 60 $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_timing_blocks.py tests/test_run.py -k "gpu_blocks or gpu_timing" >"$OUT/pytest.txt" 2>&1
else
  echo "hypothesis not installed on the device: GPU tests not run" >"$OUT/pytest.txt"
fi
