#!/usr/bin/env bash
# Benchmark (issue 30, acceptance 5, part 3; run by bench/moe.sh): expert parallelism from
# ep 1 to 4 with the same 4 ranks (dp 4, 4 x 128 tokens each per step) of a 4 x 256 Llama
# with 8 top-2 experts 512 wide (Mixtral routing), ZeRO-0, parallel3d_bench --experts. On
# this machine over shared memory, and on 2 network-namespace hosts x 2 ranks over TCP with
# each host's link limited to RATE Mbit/s (tests/cluster/netns_hosts.sh; skipped where
# namespaces cannot be made). Per layout: ms/step of the slowest rank, the all-to-all
# seconds per step, the model states per rank (parameters, gradients, AdamW state).
# Last line: one JSON object {"bench": "moe_ep", ...}.
#   EP_ROUNDS=2 STEPS=4 RATE=400 bench/moe_ep.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${EP_ROUNDS:-2}"
STEPS="${STEPS:-4}"
RATE="${RATE:-400}"
zt_build parallel3d_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
B="$ZT_BENCH_BUILD/parallel3d_bench"
CLUSTER="$ZT_ROOT/tests/cluster"
W=$(mktemp -d /tmp/zt_moe_ep.XXXXXX)
zt_netns_begin "$W" 2
ARGS=(--layers 4 --embd 256 --heads 4 --vocab 8192 --seq 128 --micro 4 --accum 1 --steps "$STEPS" --experts 8
      --expert-width 512)
LOCAL=(mpirun --oversubscribe --bind-to none --mca btl self,vader -np 4 -x OMP_NUM_THREADS)
HOSTS=()
if "$CLUSTER/netns_hosts.sh" up 2 --rate "$RATE" >/dev/null 2>"$W/netns.err"; then
  printf '10.77.0.11 slots=2\n10.77.0.12 slots=2\n' >"$W/hosts"
  zt_netns_mpirun "$W/hosts"
  HOSTS=(mpirun "${ZT_NETNS_MPIRUN[@]}" --map-by slot -np 4)
else
  echo "namespace hosts skipped: $(cat "$W/netns.err")"
fi
echo "machine: $(zt_machine)"
log="$W/log"
for round in $(seq "$ROUNDS"); do
  for ep in 1 2 4; do
    "${LOCAL[@]}" "$B" "${ARGS[@]}" --ep "$ep" | sed "s/^/local /" | tee -a "$log" >&2
    if [ ${#HOSTS[@]} -gt 0 ]; then "${HOSTS[@]}" "$B" "${ARGS[@]}" --ep "$ep" | sed "s/^/hosts /" | tee -a "$log" >&2; fi
  done
done
"$ZT_PYTHON" - "$log" "$RATE" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    where, js = line.split(" ", 1)
    r = json.loads(js)
    rows.setdefault((where, r["ep"]), []).append(r)
out = {"bench": "moe_ep", "rate_mbit": int(sys.argv[2])}
print(f"{'where':6} {'ep':>3} {'ms/step':>8} {'a2a s':>7} {'comm s':>7} {'states MB':>9}  (slowest rank; medians)")
for (where, ep), rs in sorted(rows.items()):
    # per round, the slowest rank's step time; then the median over rounds
    by_round = [rs[i:i + 4] for i in range(0, len(rs), 4)]
    ms = statistics.median(max(r["ms"] for r in g) for g in by_round)
    a2a = statistics.median(max(r["all_to_all_s_per_step"] for r in g) for g in by_round)
    comm = statistics.median(max(r["comm_s_per_step"] for r in g) for g in by_round)
    states = statistics.median(r["model_state_mb"] for r in rs)
    print(f"{where:6} {ep:3d} {ms:8.0f} {a2a:7.3f} {comm:7.3f} {states:9.1f}")
    out[f"{where}_ep{ep}"] = {"ms": round(ms, 1), "all_to_all_s": round(a2a, 3), "comm_s": round(comm, 3),
                              "states_mb": round(states, 1)}
print(json.dumps(out))
PY
