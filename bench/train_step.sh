#!/usr/bin/env bash
# Benchmark (issue 2, acceptance 4): zerotrain's fp32 AdamW training step against the
# same GPT-2 in PyTorch at the same shapes and thread count, alternating in one run.
# Shapes: GPT-2 small (12 x 768, vocab 50257) at B=4 T=64 and B=8 T=128, and a small
# model (4 x 256, vocab 50257) at B=8 T=128. Prints per shape: ms/step medians,
# tokens/s, speed-up, forward/backward/optimizer split, model FLOP/s and its fraction of
# the FMA peak measured here; the last line is one JSON object.
# zerotrain runs in two GEMM configurations (issue 12): the default, and with
# OPENBLAS_CORETYPE=Prescott forced (the SSE3 fallback Debian's OpenBLAS takes on CPUs it
# does not know), which zerotrain must route around; each configuration's GEMM path and
# OpenBLAS core are printed, and "prescott_over_default" is the step-time ratio.
#   ROUNDS=3 STEPS=3 THREADS=2 bench/train_step.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-3}"
THREADS="${THREADS:-2}"
zt_build train_step_bench fma_peak
export OMP_NUM_THREADS="$THREADS"

SHAPES=(
  "gpt2_b4t64 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 4 --seq 64"
  "gpt2_b8t128 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128"
  "small --layers 4 --heads 4 --embd 256 --vocab 50257 --batch 8 --seq 128"
)
log=$(mktemp)
ms() { echo "$1" | sed 's/.*"ms": *\([0-9.]*\).*/\1/'; }  # the "ms" field of a JSON line
peak=$("$ZT_BENCH_BUILD/fma_peak" --threads "$THREADS")
echo "machine: $(zt_machine)"
echo "fma peak: $peak"
for round in $(seq "$ROUNDS"); do
  for entry in "${SHAPES[@]}"; do
    name=${entry%% *}
    args=${entry#* }
    z=$("$ZT_BENCH_BUILD/train_step_bench" $args --steps "$STEPS" --warmup 1 --threads "$THREADS")
    zp=$(OPENBLAS_CORETYPE=Prescott "$ZT_BENCH_BUILD/train_step_bench" $args --steps "$STEPS" --warmup 1 \
         --threads "$THREADS" | sed 's/"impl":"zerotrain"/"impl":"zt_prescott"/')
    t=$("$ZT_PYTHON" "$ZT_ROOT/bench/torch_train_step.py" $args --steps "$STEPS" --warmup 1 --threads "$THREADS")
    echo "$name $z" >>"$log"
    echo "$name $zp" >>"$log"
    echo "$name $t" >>"$log"
    echo "round $round $name: zerotrain $(ms "$z") ms, with Prescott forced $(ms "$zp") ms, pytorch $(ms "$t") ms" >&2
  done
done
"$ZT_PYTHON" - "$log" "$peak" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    r = json.loads(js)
    rows.setdefault(name, {}).setdefault(r["impl"], []).append(r)
peak = json.loads(sys.argv[2])["gflops"]
shapes = {"gpt2_b4t64": (12, 768, 50257, 4, 64), "gpt2_b8t128": (12, 768, 50257, 8, 128),
          "small": (4, 256, 50257, 8, 128)}
med = lambda rs, k: statistics.median(r[k] for r in rs)
out = {"bench": "train_step", "fma_peak_gflops": peak}
first = rows[next(iter(shapes))]
for impl, label in (("zerotrain", "default"), ("zt_prescott", "OPENBLAS_CORETYPE=Prescott")):
    r = first[impl][0]
    print(f"gemm ({label}): isa {r['isa']}, OpenBLAS core {r['openblas_core']}; {r['gemm']}")
    out[f"openblas_core_{'default' if impl == 'zerotrain' else 'prescott'}"] = r["openblas_core"]
print(f"{'shape':12} {'impl':11} {'ms/step':>9} {'tok/s':>8} {'fwd':>7} {'bwd':>7} {'opt':>7} {'GFLOP/s':>8} {'peak':>6}")
ratios = []
for name, (L, C, V, B, T) in shapes.items():
    flops = (6 * (12 * L * C * C + V * C) + 12 * L * C * T) * B * T
    for impl in ("zerotrain", "zt_prescott", "pytorch"):
        rs = rows[name][impl]
        ms = med(rs, "ms")
        gf = flops / (ms / 1e3) / 1e9
        print(f"{name:12} {impl:11} {ms:9.1f} {B*T/(ms/1e3):8.1f} {med(rs,'forward_ms'):7.1f} {med(rs,'backward_ms'):7.1f} "
              f"{med(rs,'optimizer_ms'):7.1f} {gf:8.1f} {gf/peak:6.2f}")
    z, t = med(rows[name]["zerotrain"], "ms"), med(rows[name]["pytorch"], "ms")
    spread = [r["ms"] for r in rows[name]["zerotrain"]]
    print(f"{name:12} speed-up {t/z:.2f}x  (zerotrain run medians {min(spread):.0f}-{max(spread):.0f} ms over {len(spread)} runs)")
    key = "small" if name == "small" else name.replace("gpt2_", "gpt2_")
    out[f"speedup_{key}"] = round(t / z, 3)
    out[f"peak_fraction_{key}"] = round(flops / (z / 1e3) / 1e9 / peak, 3)
    zp = med(rows[name]["zt_prescott"], "ms")
    ratios.append(zp / z)
    print(f"{name:12} Prescott forced / default {zp / z:.3f}")
    out[f"prescott_over_default_{key}"] = round(zp / z, 3)
out["prescott_over_default"] = round(max(ratios), 3)
print(json.dumps(out))
PY
rm -f "$log"
