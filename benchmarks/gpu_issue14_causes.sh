#!/usr/bin/env bash
# Issue 14, first device call of session 4 (run from the repository root):  bash benchmarks/gpu_issue14_causes.sh OUTDIR
# 1. timing_causes.{txt,json}: why the runner and do_bench disagreed (benchmarks/gpu_timing_causes.py);
# 2. planted.txt (+ .md/.json): the planted wrong-result suite compared (exit 1 expected, wrong result first);
# 3. matmul_ncu.txt (+ .md/.json): `irdiff matmul --variant annotated --against unannotated --ncu`.
set -u
OUT=${1:?usage: gpu_issue14_causes.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 IRDIFF_PAGING=never
PY=${PYTHON:-python3}
$PY -c 'import pynvml, jsonschema, rapidfuzz' 2>/dev/null || $PY -m pip install -q --no-index .whl/*.whl >"$OUT/pip.log" 2>&1
B=$(mktemp -d)
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
  $PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| triton", triton.__version__)'
  $PY -c 'import pynvml; pynvml.nvmlInit(); print("nvml driver", pynvml.nvmlSystemGetDriverVersion())' 2>&1 | tail -1
  git log -1 --format='commit %h %s' 2>/dev/null
} >"$OUT/env.txt" 2>&1
t0=$SECONDS
{ timeout 230 $PY benchmarks/gpu_timing_causes.py --out "$OUT" \
    --cases matmul:2048:unannotated:annotated,matmul:4096:unannotated:annotated,persistent-matmul:4096:tiled:persistent
  echo "[exit $?, $((SECONDS - t0)) s]"; } >"$OUT/causes_stdout.log" 2>&1
t0=$SECONDS
{ echo "\$ irdiff tests/suites/planted_bug.py --variant half_k --against correct --shape M=2048,N=2048,K=2048"
  timeout 90 $PY -m irdiff tests/suites/planted_bug.py --variant half_k --against correct --shape M=2048,N=2048,K=2048 \
    --save "$B/q" --color never --width 120 --md "$OUT/planted.md" --html "$B/planted.html" --json-report "$B/planted.json" --force
  echo "[exit $?, $((SECONDS - t0)) s]"; } >"$OUT/planted.txt" 2>&1
$PY - "$B/planted.html" "$OUT/planted.html.findings.txt" <<'PYEOF'
import re, sys, html
t = open(sys.argv[1], encoding="utf-8").read() if __import__("os").path.exists(sys.argv[1]) else ""
# the findings section's text, tags stripped, first 3000 characters: which finding comes first
body = re.sub(r"<script.*?</script>|<style.*?</style>", "", t, flags=re.S)
txt = html.unescape(re.sub(r"<[^>]+>", " ", body))
txt = re.sub(r"\s+", " ", txt)
open(sys.argv[2], "w").write(txt[:6000] + "\n")
PYEOF
t0=$SECONDS
{ echo "\$ irdiff matmul --variant annotated --against unannotated --shape M=4096,N=4096,K=4096 --ncu"
  timeout 170 $PY -m irdiff matmul --variant annotated --against unannotated --shape M=4096,N=4096,K=4096 --ncu \
    --save "$B/m" --color never --width 140 --md "$OUT/matmul_ncu.md" --html "$B/m.html" --json-report "$B/m.json" --force
  echo "[exit $?, $((SECONDS - t0)) s]"; } >"$OUT/matmul_ncu.txt" 2>&1
$PY - "$B/m.html" "$OUT/matmul_ncu.html.findings.txt" <<'PYEOF'
import re, sys, html, os
t = open(sys.argv[1], encoding="utf-8").read() if os.path.exists(sys.argv[1]) else ""
body = re.sub(r"<script.*?</script>|<style.*?</style>", "", t, flags=re.S)
txt = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))
open(sys.argv[2], "w").write(txt[:8000] + "\n")
PYEOF
for pair in "$B/m.json:$OUT/matmul_ncu.report.json" "$B/planted.json:$OUT/planted.report.json"; do
$PY - "${pair%%:*}" "${pair#*:}" <<'PYEOF'
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
done
ls -la "$OUT"
