#!/usr/bin/env bash
# Benchmark (issue 4, acceptance 6): GPT-2 small data-parallel on 2 ranks x 1 thread
# (B=4, T=64 per rank), zerotrain at ZeRO stages 0-3 against PyTorch DDP (gloo, 2 x 1
# thread, same per-rank batch), alternating in one run. Buckets: 6.25 M elements (25 MB,
# DDP's default bucket) for zerotrain's gradient reduction. Reports medians; the last
# line is one JSON object with speedup_vs_ddp_stage0, stage3_over_stage0 and
# hidden_comm_fraction_stage0.
#   ROUNDS=3 STEPS=3 bench/zero.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-3}"
zt_build zero_bench
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --mca btl self,vader -np 2)
log=$(mktemp)
echo "machine: $(zt_machine)"
for round in $(seq "$ROUNDS"); do
  for stage in 0 1 2 3; do
    z=$("${MPIRUN[@]}" "$ZT_BENCH_BUILD/zero_bench" --stage "$stage" --steps "$STEPS")
    echo "$z" >>"$log"
    echo "round $round: $z" >&2
  done
  port=$((29500 + RANDOM % 1000))
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$ZT_PYTHON" "$ZT_ROOT/bench/torch_ddp.py" \
    --steps "$STEPS" >/dev/null &
  t=$(RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$ZT_PYTHON" "$ZT_ROOT/bench/torch_ddp.py" --steps "$STEPS")
  wait
  echo "$t" >>"$log"
  echo "round $round: $t" >&2
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda rs, k: statistics.median(r[k] for r in rs)
ddp = [r for r in rows if r["impl"] == "pytorch_ddp"]
zt = {s: [r for r in rows if r["impl"] == "zerotrain" and r["stage"] == s] for s in range(4)}
print(f"{'':18} {'ms/step':>9} {'tok/s':>8} {'comm s':>7} {'exposed s':>9} {'hidden':>7} {'states MB':>9} {'buckets MB':>10}")
print(f"{'PyTorch DDP gloo':18} {med(ddp,'ms'):9.0f} {med(ddp,'tokens_per_s'):8.1f}")
for s in range(4):
    rs = zt[s]
    print(f"{'zerotrain stage '+str(s):18} {med(rs,'ms'):9.0f} {med(rs,'tokens_per_s'):8.1f} {med(rs,'comm_s_per_step'):7.2f} "
          f"{med(rs,'exposed_s_per_step'):9.2f} {med(rs,'hidden_fraction'):7.2f} {med(rs,'model_state_mb'):9.0f} {med(rs,'bucket_mb'):10.0f}")
out = {"bench": "zero", "speedup_vs_ddp_stage0": round(med(zt[0], "tokens_per_s") / med(ddp, "tokens_per_s"), 3),
       "stage3_over_stage0": round(med(zt[3], "ms") / med(zt[0], "ms"), 3),
       "hidden_comm_fraction_stage0": round(med(zt[0], "hidden_fraction"), 3)}
for s in range(4):
    out[f"ms_stage{s}"] = round(med(zt[s], "ms"), 1)
out["ms_ddp"] = round(med(ddp, "ms"), 1)
print(json.dumps(out))
PY
rm -f "$log"
