#!/usr/bin/env bash
# Benchmark (issue 5, acceptance 2 and 4): GPT-2 small, the same global batch of 8 x 64
# tokens per step, on 2 ranks x 1 thread as dp=2 (4 per rank), pp=2 (1F1B, 4 micro-batches
# of 2) and tp=2 (8 per rank), and on 1 rank x 2 threads with and without activation
# checkpointing. Per configuration: ms/step, communication time, pipeline bubble beside the
# ideal (S-1)/(M+S-1), activation and peak memory per rank. Last line: one JSON object.
#   ROUNDS=2 STEPS=3 bench/parallel3d.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-2}"
STEPS="${STEPS:-3}"
zt_build parallel3d_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI2=(mpirun --oversubscribe --mca btl self,vader -np 2)
B="$ZT_BENCH_BUILD/parallel3d_bench"
log=$(mktemp)
echo "machine: $(zt_machine)"
for round in $(seq "$ROUNDS"); do
  { OMP_NUM_THREADS=1 "${MPI2[@]}" "$B" --micro 4 --accum 1 --steps "$STEPS" | sed 's/^/dp2 /'
    OMP_NUM_THREADS=1 "${MPI2[@]}" "$B" --pp 2 --micro 2 --accum 4 --steps "$STEPS" | sed 's/^/pp2 /'
    OMP_NUM_THREADS=1 "${MPI2[@]}" "$B" --tp 2 --micro 8 --accum 1 --steps "$STEPS" | sed 's/^/tp2 /'
    OMP_NUM_THREADS=2 "$B" --micro 8 --accum 1 --steps "$STEPS" | sed 's/^/single /'
    OMP_NUM_THREADS=2 "$B" --micro 8 --accum 1 --ckpt 1 --steps "$STEPS" | sed 's/^/ckpt /'
  } | tee -a "$log" >&2
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    r = json.loads(js)
    rows.setdefault(name, []).append(r)
med = lambda rs, k: statistics.median(r[k] for r in rs)
print(f"{'config':8} {'ms/step':>8} {'comm s':>7} {'bubble':>7} {'ideal':>6} {'act MB':>8} {'states MB':>9} {'peak MB':>8}  (per rank)")
for name in ["dp2", "pp2", "tp2", "single", "ckpt"]:
    for rank in sorted({r["rank"] for r in rows[name]}):
        rs = [r for r in rows[name] if r["rank"] == rank]
        print(f"{name:6} r{rank} {med(rs,'ms'):8.0f} {med(rs,'comm_s_per_step'):7.2f} {med(rs,'bubble'):7.3f} "
              f"{med(rs,'ideal_bubble'):6.3f} {med(rs,'activation_mb'):8.1f} {med(rs,'model_state_mb'):9.1f} {med(rs,'peak_rss_mb'):8.0f}")
step = lambda n: statistics.median(max(r["ms"] for r in rows[n] if r.get("_") is None and True) for _ in [0])
ms = {n: med(rows[n], "ms") for n in rows}
act = {n: med(rows[n], "activation_mb") for n in rows}
out = {"bench": "parallel3d", "pp2_over_dp2": round(ms["pp2"] / ms["dp2"], 3), "tp2_over_dp2": round(ms["tp2"] / ms["dp2"], 3),
       "ckpt_time_overhead": round(ms["ckpt"] / ms["single"] - 1.0, 3),
       "ckpt_activation_ratio": round(act["ckpt"] / act["single"], 3),
       "pp2_bubble": round(med(rows["pp2"], "bubble"), 3), "pp2_ideal_bubble": round(med(rows["pp2"], "ideal_bubble"), 3),
       "ms": {n: round(v, 1) for n, v in ms.items()}}
print(json.dumps(out))
PY
rm -f "$log"
