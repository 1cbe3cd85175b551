#!/usr/bin/env bash
# The CUDA device check (issue 28), run on the GPU machine from the repository root with
# .device/ carried (bench/cuda/pack_device.sh makes it here). In about 3 minutes it
# prints the card, the CUDA tests (every test, bitwise and bounded comparisons against
# the CPU kernels), `zerotrain doctor`, a memory checker's run over the small CUDA tests,
# and zerotrain's kernels against PyTorch's at GPT-2 124M sizes, ending with one JSON
# line. Logs go to $OUT (the device tool's folder) or /tmp/zt_device_out.
# usage: bash bench/cuda/device_check.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PKG=${ZT_DEVICE_DIR:-$ROOT/.device}
LOGS=${OUT:-/tmp/zt_device_out}
RT=/tmp/zt_rt
mkdir -p "$LOGS" "$RT"
for d in "$PKG"/debs/*.deb; do dpkg -x "$d" "$RT"; done
export LD_LIBRARY_PATH="$RT/usr/lib/x86_64-linux-gnu:$RT/usr/lib/x86_64-linux-gnu/openblas-openmp:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
section() { printf '\n=== %s\n' "$1"; }

section "card"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
section "CUDA tests"
"$PKG/bin/zt_cuda_tests" --gtest_color=no 2>&1 | tee "$LOGS/cuda_tests.log" | grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|^  |Failure|Expected|Which is|actual|vs exact|element" | head -120
tests_rc=${PIPESTATUS[0]}
section "doctor"
"$PKG/bin/zerotrain" doctor 2>&1 | tee "$LOGS/doctor.log" | grep -E "^(cpu|isa|amx|cuda|threads|memory) " || true
section "memory checker (compute-sanitizer memcheck, small tests)"
if command -v compute-sanitizer >/dev/null; then
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$PKG/bin/zt_cuda_tests" --gtest_color=no \
    --gtest_filter='CudaActivation.BackwardMay*:CudaOptimizer.Lamb*:CudaOptimizer.SumOfSquares*:CudaGemm.LinearBackward*' \
    > "$LOGS/memcheck.log" 2>&1
  memcheck_rc=$?
  tail -3 "$LOGS/memcheck.log"
else
  memcheck_rc=127
  echo "compute-sanitizer not found"
fi
section "kernels: zerotrain"
"$PKG/bin/gpu_kernels_bench" 2>&1 | tee "$LOGS/zt_kernels.log"
section "kernels: PyTorch on the same card"
python3 "$ROOT/bench/cuda/torch_kernels.py" 2>&1 | tee "$LOGS/torch_kernels.log"
section "summary"
python3 - "$LOGS" "$tests_rc" "$memcheck_rc" <<'PY'
import json, re, sys
logs, tests_rc, mem_rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def last_json(path):
    try:
        lines = [l for l in open(path) if l.startswith("{")]
        return json.loads(lines[-1]) if lines else {}
    except OSError:
        return {}
zt, th = last_json(logs + "/zt_kernels.log"), last_json(logs + "/torch_kernels.log")
text = open(logs + "/cuda_tests.log").read()
counts = {k: len(re.findall(r"^\[ +%s +\] \S+ \(" % k, text, re.M)) for k in ("OK", "FAILED", "SKIPPED")}
ratios = {k: round(th["ms"][k] / v, 3) for k, v in zt.get("ms", {}).items() if k in th.get("ms", {}) and v > 0}
print(json.dumps({"device_check": "cuda", "card": zt.get("device", "?"), "torch": th.get("torch", "?"),
                  "cuda_tests": counts, "cuda_tests_exit": tests_rc, "memcheck_exit": mem_rc,
                  "torch_ms_over_zerotrain_ms": ratios}))
PY
