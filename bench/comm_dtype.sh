#!/usr/bin/env bash
# communication_data_type (issue 31): the built-in demo (a 4 x 256 GPT on Debian's fortunes,
# AdamW, warmup-cosine) on 2 MPI ranks of one thread each at ZeRO stage STAGE, once with
# each gradient reduction format: fp32, bf16, fp16.
# 1. STEPS steps on this machine: the final validation loss of each and its relative
#    difference from fp32's (issue 31's bar: within 1 %).
# 2. TIME_STEPS steps on 2 network-namespace hosts, one rank each, each host's link limited
#    to RATE Mbit/s (tests/cluster/netns_hosts.sh; skipped where namespaces cannot be made):
#    the median step time of each format, where the halved gradient bytes show.
# The bytes a step sends are checked exactly by the test
# TrainerCommDtype.SixteenBitsHalveTheGradientBytes (stage 0: half; stages 1-2: 3/4).
# Last line: one JSON object {"bench": "comm_dtype", ...}.
#   STEPS=200 TIME_STEPS=20 RATE=400 STAGE=2 bench/comm_dtype.sh   (ZEROTRAIN=path: no build)
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-200}"
TIME_STEPS="${TIME_STEPS:-20}"
RATE="${RATE:-400}"
STAGE="${STAGE:-2}"
if [ -z "${ZEROTRAIN:-}" ]; then
  zt_build zerotrain_cli
  ZEROTRAIN="$ZT_BENCH_BUILD/zerotrain"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
W=$(mktemp -d /tmp/zt_comm_dtype.XXXXXX)
zt_netns_begin "$W" 2
echo "machine: $(zt_machine)"

# demo RUNNER NAME STEPS DTYPE: trains, leaves $W/NAME.log and $W/NAME/metrics.csv.
demo() {
  local runner=$1 name=$2 steps=$3 dt=$4
  (cd "$W" && eval "$runner" "$ZEROTRAIN" train --demo --set training.steps="$steps" \
     --set scheduler.params.total_num_steps="$steps" --set training.eval_interval="$steps" \
     --set training.sample_tokens=0 --set training.save_at_end=false --set zero_optimization.stage="$STAGE" \
     --set communication_data_type="$dt" --set training.output_dir="$W/$name" >"$W/$name.log" 2>&1) ||
    { tail -5 "$W/$name.log"; exit 1; }
}
median_ms() {
  "$ZT_PYTHON" - "$1" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))][3:]
print(round(statistics.median(float(r["forward_ms"]) + float(r["backward_ms"]) + float(r["optimizer_ms"]) for r in rows), 1))
PY
}

declare -A val local_ms hosts_ms
for dt in fp32 bf16 fp16; do
  demo "mpirun -np 2 --bind-to none -x OMP_NUM_THREADS" "local_$dt" "$STEPS" "$dt"
  val[$dt]=$(grep -o "final validation loss: [0-9.]*" "$W/local_$dt.log" | awk '{print $4}')
  local_ms[$dt]=$(median_ms "$W/local_$dt/metrics.csv")
  echo "local $dt: final validation loss ${val[$dt]} after $STEPS steps, median step ${local_ms[$dt]} ms"
done
if "$ZT_ROOT/tests/cluster/netns_hosts.sh" up 2 --rate "$RATE" >/dev/null 2>"$W/netns.err"; then
  printf '10.77.0.11 slots=1\n10.77.0.12 slots=1\n' >"$W/hosts"
  zt_netns_mpirun "$W/hosts"
  for dt in fp32 bf16 fp16; do
    demo "mpirun ${ZT_NETNS_MPIRUN[*]} -np 2" "hosts_$dt" "$TIME_STEPS" "$dt"
    hosts_ms[$dt]=$(median_ms "$W/hosts_$dt/metrics.csv")
    echo "2 hosts at $RATE Mbit/s, $dt: median step ${hosts_ms[$dt]} ms"
  done
else
  echo "namespace hosts skipped: $(cat "$W/netns.err")"
  for dt in fp32 bf16 fp16; do hosts_ms[$dt]=0; done
fi
"$ZT_PYTHON" - "${val[fp32]}" "${val[bf16]}" "${val[fp16]}" "$STEPS" "$STAGE" "$RATE" \
  "${hosts_ms[fp32]}" "${hosts_ms[bf16]}" "${hosts_ms[fp16]}" <<'PY'
import json, sys
f32, b16, f16 = map(float, sys.argv[1:4])
h32, h16b, h16f = map(float, sys.argv[7:10])
rel = lambda x: round(abs(x - f32) / f32, 5)
print(f"validation loss from fp32 reduction's: bf16 {100 * rel(b16):.3f} %, fp16 {100 * rel(f16):.3f} % (bar: 1 %)")
if h32 > 0:
    print(f"step time on 2 hosts at {sys.argv[6]} Mbit/s: bf16 {h32 / h16b:.2f}x, fp16 {h32 / h16f:.2f}x faster than fp32")
print(json.dumps({"bench": "comm_dtype", "steps": int(sys.argv[4]), "zero_stage": int(sys.argv[5]), "ranks": 2,
                  "val_loss": {"fp32": f32, "bf16": b16, "fp16": f16},
                  "rel_diff": {"bf16": rel(b16), "fp16": rel(f16)},
                  "hosts_rate_mbit": int(sys.argv[6]), "hosts_step_ms": {"fp32": h32, "bf16": h16b, "fp16": h16f}}))
PY
