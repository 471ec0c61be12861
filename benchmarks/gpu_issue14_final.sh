#!/usr/bin/env bash
# Issue 14, second device call of session 4 (run from the repository root):  bash benchmarks/gpu_issue14_final.sh OUTDIR
# 1. planted.{txt,md,report.json}, planted.html.findings.txt: the planted wrong-result suite compared (exit 1);
# 2. persistent_ncu.{txt,md,report.json}: `irdiff persistent-matmul --variant persistent --against tiled --ncu`;
# 3. bench_agreement.{txt,json}: benchmarks/bench_agreement.py (runner vs do_bench in a comparable sustained
#    setting, partners, run to run, clocks).
# Everything but env.txt and bench_agreement.txt is also packed into results.tar.gz (the device returns few files).
set -u
OUT=${1:?usage: gpu_issue14_final.sh OUTDIR}
W=$(mktemp -d)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
$PY -c 'import pynvml, jsonschema, rapidfuzz' 2>/dev/null || $PY -m pip install -q --no-index .whl/*.whl >"$W/pip.log" 2>&1
B=$(mktemp -d)
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
  $PY -c 'import pynvml; pynvml.nvmlInit(); print("nvml driver", pynvml.nvmlSystemGetDriverVersion())' 2>&1 | tail -1
  git log -1 --format='commit %h %s' 2>/dev/null
} >"$OUT/env.txt" 2>&1
html_text() {  # html_text IN OUT: the report's text, tags stripped (what a reader sees first)
  $PY - "$1" "$2" <<'PYEOF'
import html, os, re, sys
t = open(sys.argv[1], encoding="utf-8").read() if os.path.exists(sys.argv[1]) else ""
body = re.sub(r"<script.*?</script>|<style.*?</style>", "", t, flags=re.S)
open(sys.argv[2], "w").write(re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))[:12000] + "\n")
PYEOF
}
slim() {  # slim IN OUT: the JSON report without facts and stage texts
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"error": str(e)}
keep = {k: r.get(k) for k in ("schema", "suite", "a", "b", "command", "diagnosis", "timing", "error")}
if isinstance(keep.get("diagnosis"), dict):
    keep["diagnosis"] = {k: v for k, v in keep["diagnosis"].items() if k != "facts"}
json.dump(keep, open(sys.argv[2], "w"), indent=1, default=str)
PYEOF
}
t0=$SECONDS
{ echo "\$ irdiff tests/suites/planted_bug.py --variant half_k --against correct --shape M=2048,N=2048,K=2048"
  timeout 80 $PY -m irdiff tests/suites/planted_bug.py --variant half_k --against correct --shape M=2048,N=2048,K=2048 \
    --save "$B/q" --color never --width 120 --md "$W/planted.md" --html "$B/planted.html" --json-report "$B/planted.json" --force
  echo "[exit $?, $((SECONDS - t0)) s]"; } >"$W/planted.txt" 2>&1
html_text "$B/planted.html" "$W/planted.html.text.txt"; slim "$B/planted.json" "$W/planted.report.json"
t0=$SECONDS
{ echo "\$ irdiff persistent-matmul --variant persistent --against tiled --ncu"
  timeout 110 $PY -m irdiff persistent-matmul --variant persistent --against tiled --ncu \
    --save "$B/p" --color never --width 140 --md "$W/persistent_ncu.md" --html "$B/p.html" --json-report "$B/p.json" --force
  echo "[exit $?, $((SECONDS - t0)) s]"; } >"$W/persistent_ncu.txt" 2>&1
html_text "$B/p.html" "$W/persistent_ncu.html.text.txt"; slim "$B/p.json" "$W/persistent_ncu.report.json"
t0=$SECONDS
{ timeout 380 $PY benchmarks/bench_agreement.py --out "$W"; echo "[exit $?, $((SECONDS - t0)) s]"; } >"$W/bench_stdout.log" 2>&1
cp "$W/bench_agreement.txt" "$OUT/" 2>/dev/null
tail -3 "$W/bench_stdout.log" >>"$OUT/env.txt"
tar -czf "$OUT/results.tar.gz" -C "$W" .
ls -la "$W"
