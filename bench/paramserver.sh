#!/usr/bin/env bash
# Benchmark (issue 7, acceptance 3-4): parameter-server training in synchronous,
# asynchronous and staleness-2 modes against all-reduce data parallelism on the same
# workers and global batch, with and without one slowed worker, alternating in one run.
# PS: S servers + W workers (mpirun -np S+W); all-reduce: the W workers alone (mpirun -np
# W, ZeRO stage 0, ring), so both do the same compute per step and the ratio isolates how
# the gradients and parameters travel. Slowed: worker 1 sleeps SLOW_MS per step
# (parameter_server.test_slow_worker; the all-reduce loop sleeps the same way). Model:
# GPT 4 layers x 256, byte vocabulary, B=4 T=64 per worker, 1 thread per rank. Reports
# medians; the last line is one JSON object with async_over_sync_slowed (asynchronous /
# synchronous tokens/s with the slowed worker) and sync_over_allreduce (synchronous /
# all-reduce step time, no slowed worker).
#   ROUNDS=3 STEPS=30 SLOW_MS=100 SERVERS=1 WORKERS=2 bench/paramserver.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-30}"
SLOW_MS="${SLOW_MS:-100}"
SERVERS="${SERVERS:-1}"
WORKERS="${WORKERS:-2}"
zt_build ps_bench
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --mca btl self,vader)
BENCH="$ZT_BENCH_BUILD/ps_bench"
log=$(mktemp)
echo "machine: $(zt_machine)"
echo "$SERVERS server(s), $WORKERS workers, $STEPS global steps per run, slowed worker: +$SLOW_MS ms per step"
for round in $(seq "$ROUNDS"); do
  for slowed in 0 1; do
    ps_slow=() ar_slow=()
    if [ "$slowed" = 1 ]; then
      ps_slow=(--slow-rank $((SERVERS + 1)) --slow-ms "$SLOW_MS")  # worker 1
      ar_slow=(--slow-rank 1 --slow-ms "$SLOW_MS")
    fi
    runs=("allreduce|${MPIRUN[*]} -np $WORKERS $BENCH --impl allreduce ${ar_slow[*]}"
          "sync|${MPIRUN[*]} -np $((SERVERS + WORKERS)) $BENCH --impl ps --servers $SERVERS --mode sync ${ps_slow[*]}"
          "async|${MPIRUN[*]} -np $((SERVERS + WORKERS)) $BENCH --impl ps --servers $SERVERS --mode async ${ps_slow[*]}"
          "bounded2|${MPIRUN[*]} -np $((SERVERS + WORKERS)) $BENCH --impl ps --servers $SERVERS --mode bounded --staleness 2 ${ps_slow[*]}")
    for r in "${runs[@]}"; do
      out=$(${r#*|} --steps "$STEPS" 2>/dev/null)
      echo "$out" >>"$log"
      echo "round $round, slowed $slowed, ${r%%|*}: $out" >&2
    done
  done
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def pick(mode, slowed):
    return [r for r in rows if r["mode"] == mode and r["slowed"] == slowed]
med = lambda rs, k: statistics.median(r[k] for r in rs)
names = {"allreduce": "all-reduce (W ranks)", "sync": "PS sync", "async": "PS async", "bounded2": "PS staleness 2"}
print(f"{'':22} {'slowed':>6} {'tokens/s':>9} {'ms/step':>8} {'push ms':>8} {'pull ms':>8} {'wait ms':>8} {'stale max':>9} {'units per worker':>17}")
for slowed in (0, 1):
    for mode in ("allreduce", "sync", "async", "bounded2"):
        rs = pick(mode, slowed)
        if mode == "allreduce":
            print(f"{names[mode]:22} {slowed:6} {med(rs,'tokens_per_s'):9.0f} {med(rs,'step_ms'):8.1f}")
        else:
            units = "/".join(str(u) for u in rs[len(rs) // 2]["worker_units"])
            print(f"{names[mode]:22} {slowed:6} {med(rs,'tokens_per_s'):9.0f} {med(rs,'step_ms'):8.1f} "
                  f"{med(rs,'push_ms_per_msg'):8.2f} {med(rs,'pull_ms_per_msg'):8.2f} {med(rs,'pull_wait_ms_per_step'):8.1f} "
                  f"{max(r['staleness_max'] for r in rs):9d} {units:>17}")
out = {"bench": "paramserver",
       "async_over_sync_slowed": round(med(pick("async", 1), "tokens_per_s") / med(pick("sync", 1), "tokens_per_s"), 3),
       "sync_over_allreduce": round(med(pick("sync", 0), "step_ms") / med(pick("allreduce", 0), "step_ms"), 3)}
for slowed in (0, 1):
    for mode in ("allreduce", "sync", "async", "bounded2"):
        out[f"tokens_per_s_{mode}{'_slowed' if slowed else ''}"] = round(med(pick(mode, slowed), "tokens_per_s"), 1)
        out[f"ms_{mode}{'_slowed' if slowed else ''}"] = round(med(pick(mode, slowed), "step_ms"), 1)
out["staleness2_max"] = max(r["staleness_max"] for r in pick("bounded2", 0) + pick("bounded2", 1))
print(json.dumps(out))
PY
rm -f "$log"
