#!/usr/bin/env bash
# ZeRO++ (issue 31) against ZeRO-3 on the built-in demo (a 4 x 256 GPT on Debian's fortunes,
# AdamW, warmup-cosine), one thread per rank:
# 1. STEPS steps on NP ranks of this machine: ZeRO-3, qwZ (zero_quantized_weights), qgZ
#    (zero_quantized_gradients, one level over dp) and all three (qwZ + qgZ + hpZ with
#    groups of RPH ranks: qgZ's two levels): the final validation loss of each and its
#    relative difference from ZeRO-3's (issue 31's bar: within 1 %).
# 2. TIME_STEPS steps on HOSTS network-namespace hosts with RPH ranks each, each host's
#    link limited to RATE Mbit/s (tests/cluster/netns_hosts.sh; skipped where namespaces
#    cannot be made), for ZeRO-3, qwZ, hpZ (zero_hpz_partition_size = RPH: one host's ranks),
#    qwZ + hpZ, qgZ and all three: each variant's logical bytes per step and rank (from the
#    run report: the dp group's, which cross hosts, by operation, and hpZ's group's within
#    the host; qgZ's exchange counts once, where it is received) and its median step time.
# hpZ alone gives ZeRO-3's bits (TrainerHpz), so the loss runs skip it.
# Last line: one JSON object {"bench": "zeropp", ...}.
#   STEPS=200 NP=4 HOSTS=4 RPH=2 TIME_STEPS=6 RATE=400 bench/zeropp.sh   (ZEROTRAIN=path: no build)
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-200}"
NP="${NP:-4}"
HOSTS="${HOSTS:-4}"
TIME_STEPS="${TIME_STEPS:-6}"
RPH="${RPH:-2}"
RATE="${RATE:-400}"
if [ -z "${ZEROTRAIN:-}" ]; then
  zt_build zerotrain_cli
  ZEROTRAIN="$ZT_BENCH_BUILD/zerotrain"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
W=$(mktemp -d /tmp/zt_zeropp.XXXXXX)
zt_netns_begin "$W" "$HOSTS"
echo "machine: $(zt_machine)"

# demo RUNNER NAME STEPS EVAL VARIANT: trains; leaves $W/NAME.log and $W/NAME/{metrics.csv,run_report.json}.
demo() {
  local runner=$1 name=$2 steps=$3 eval=$4 q=false h=1 g=false
  case $5 in
    qwz) q=true ;; hpz) h=$RPH ;; qwz_hpz) q=true; h=$RPH ;; qgz) g=true ;; all) q=true; h=$RPH; g=true ;;
  esac
  (cd "$W" && eval "$runner" "$ZEROTRAIN" train --demo --set training.steps="$steps" \
     --set scheduler.params.total_num_steps="$steps" --set training.eval_interval="$eval" \
     --set training.sample_tokens=0 --set training.save_at_end=false --set zero_optimization.stage=3 \
     --set zero_optimization.zero_quantized_weights="$q" --set zero_optimization.zero_hpz_partition_size="$h" \
     --set zero_optimization.zero_quantized_gradients="$g" --set training.output_dir="$W/$name" >"$W/$name.log" 2>&1) ||
    { tail -5 "$W/$name.log"; exit 1; }
}
median_ms() {
  "$ZT_PYTHON" - "$1" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))][2:]
print(round(statistics.median(float(r["forward_ms"]) + float(r["backward_ms"]) + float(r["optimizer_ms"]) for r in rows), 1))
PY
}
# Rank 0's logical bytes per step: the dp group's by operation, and hpZ's group's, as JSON.
bytes_per_step() {
  "$ZT_PYTHON" - "$1/run_report.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
n = int(sys.argv[2])
out = {k: round(v / n) for k, v in sorted(r["comm_logical_bytes"].items())}
out["hpz_group"] = round(r.get("hpz_comm_logical_bytes", 0) / n)
print(json.dumps(out))
PY
}

declare -A val ms bytes
LOSS_RUNS="zero3 qwz qgz all"
TIME_RUNS="zero3 qwz hpz qwz_hpz qgz all"
for v in $LOSS_RUNS; do
  demo "mpirun -np $NP --oversubscribe --bind-to none -x OMP_NUM_THREADS" "local_$v" "$STEPS" "$STEPS" "$v"
  val[$v]=$(grep -o "final validation loss: [0-9.]*" "$W/local_$v.log" | awk '{print $4}')
  echo "local $v: final validation loss ${val[$v]} after $STEPS steps on $NP ranks"
done
if "$ZT_ROOT/tests/cluster/netns_hosts.sh" up "$HOSTS" --rate "$RATE" >/dev/null 2>"$W/netns.err"; then
  for i in $(seq "$HOSTS"); do echo "10.77.0.$((10 + i)) slots=$RPH"; done >"$W/hosts"
  zt_netns_mpirun "$W/hosts"
  for v in $TIME_RUNS; do
    demo "mpirun ${ZT_NETNS_MPIRUN[*]} -np $((HOSTS * RPH))" "hosts_$v" "$TIME_STEPS" 0 "$v"
    ms[$v]=$(median_ms "$W/hosts_$v/metrics.csv")
    bytes[$v]=$(bytes_per_step "$W/hosts_$v" "$TIME_STEPS")
    echo "$HOSTS hosts at $RATE Mbit/s, $v: median step ${ms[$v]} ms; bytes per step and rank ${bytes[$v]}"
  done
else
  echo "namespace hosts skipped: $(cat "$W/netns.err")"
  for v in $TIME_RUNS; do ms[$v]=0; bytes[$v]='{}'; done
fi
vals=(); for v in $LOSS_RUNS; do vals+=("$v=${val[$v]}"); done
times=(); for v in $TIME_RUNS; do times+=("$v=${ms[$v]}=${bytes[$v]}"); done
"$ZT_PYTHON" - "$STEPS" "$NP" "$HOSTS" "$RATE" "$RPH" "${#vals[@]}" "${vals[@]}" "${times[@]}" <<'PY'
import json, sys
steps, np_, hosts, rate, rph, nv = map(int, sys.argv[1:7])
val = {k: float(x) for k, x in (a.split("=", 1) for a in sys.argv[7:7 + nv])}
ms, b = {}, {}
for a in sys.argv[7 + nv:]:
    k, t, j = a.split("=", 2)
    ms[k], b[k] = float(t), json.loads(j)
rel = {k: round(abs(v - val["zero3"]) / val["zero3"], 5) for k, v in val.items() if k != "zero3"}
for k, r in rel.items():
    print(f"{k}'s validation loss from ZeRO-3's: {100 * r:.3f} % (bar: 1 %)")
# The dp group's bytes: a point-to-point byte (qgZ's exchange over zerotrain's ring
# algorithm) counts once, where it is received, as MPI's all-to-all counts it.
cross = lambda x: sum(v for k, v in x.items() if k not in ("hpz_group", "send"))
if ms["zero3"] > 0:
    for v in list(ms)[1:]:
        print(f"{v}: dp-group bytes (the group spans the hosts) {cross(b[v]) / cross(b['zero3']):.3f} of ZeRO-3's; "
              f"step {ms['zero3'] / ms[v]:.2f}x faster")
print(json.dumps({"bench": "zeropp", "steps": steps, "ranks": np_, "val_loss": val, "rel_diff": rel, "hosts": hosts,
                  "ranks_per_host": rph, "rate_mbit": rate, "step_ms": ms, "bytes_per_step": b}))
PY
