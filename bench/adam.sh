#!/usr/bin/env bash
# Benchmark (issue 2, acceptance 5): zerotrain's AdamW step on GPT-2 small's 124 M
# parameters against torch.optim.AdamW on the same threads (the model's 148 tensors, as
# PyTorch users hold them; one flat tensor shown too), and against this machine's triad
# bandwidth, measured in the same process as the AdamW step. Alternates the two
# implementations ROUNDS times; reports medians. Also zerotrain's mixed-precision step,
# which writes the bf16 compute copy of the parameters inside the update's pass, against
# the update followed by the bulk cast. Last line: one JSON object.
#   ROUNDS=5 THREADS=2 bench/adam.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-5}"
THREADS="${THREADS:-2}"
zt_build adam_bench
export OMP_NUM_THREADS="$THREADS"
log=$(mktemp)
echo "machine: $(zt_machine)"
zt_alternate "$ROUNDS" "$log" '"$ZT_BENCH_BUILD/adam_bench" --threads "$THREADS" --reps 7' \
  '"$ZT_PYTHON" "$ZT_ROOT/bench/torch_adam.py" --threads "$THREADS" --reps 5'
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
z = [r for r in rows if r["impl"] == "zerotrain"]
t = [r for r in rows if r["impl"] == "pytorch"]
med = lambda rs, k: statistics.median(r[k] for r in rs)
zm, tm, tf = med(z, "adam_ms"), med(t, "adam_ms"), med(t, "adam_flat_ms")
zb, tb = med(z, "adam_gbs"), med(z, "triad_gbs")
print(f"params {z[0]['params']}, isa {z[0]['isa']}")
print(f"zerotrain AdamW      {zm:8.1f} ms  {zb:6.1f} GB/s (7 floats/param, STREAM counting)")
print(f"triad                {med(z, 'triad_ms'):8.1f} ms  {tb:6.1f} GB/s")
print(f"torch AdamW (148 tensors) {tm:8.1f} ms   speed-up {tm/zm:.2f}x")
print(f"torch AdamW (1 flat tensor) {tf:6.1f} ms   speed-up {tf/zm:.2f}x")
fused, two = med(z, "bf16_copy_fused_ms"), med(z, "bf16_copy_two_pass_ms")
print(f"mixed precision, AdamW with the bf16 compute copy: in the update's pass {fused:.1f} ms, "
      f"update then cast {two:.1f} ms ({fused / two:.3f})")
print(f"zerotrain run medians {min(r['adam_ms'] for r in z):.1f}-{max(r['adam_ms'] for r in z):.1f} ms over {len(z)} runs")
print(json.dumps({"bench": "adam", "params": z[0]["params"], "zerotrain_ms": round(zm, 2), "torch_ms": round(tm, 2),
                  "torch_flat_ms": round(tf, 2), "speedup_vs_torch": round(tm / zm, 3),
                  "adam_gbs": round(zb, 2), "triad_gbs": round(tb, 2), "bandwidth_fraction": round(zb / tb, 3),
                  "bf16_copy_fused_ms": round(fused, 2), "bf16_copy_two_pass_ms": round(two, 2)}))
PY
rm -f "$log"
