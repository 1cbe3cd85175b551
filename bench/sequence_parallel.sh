#!/usr/bin/env bash
# Sequence parallelism's capacity (issue 31, acceptance 2): a sequence 4x longer on 4
# Ulysses ranks against one rank, per-rank memory predicted by `zerotrain estimate` and
# measured by a short run (the run report's activation arena and peak RSS), with flash
# attention (training.attention "flash": no T x T kept) and, for contrast, the materialized
# attention (T x T probabilities per head).
# Model: the demo's byte GPT widened to N_LAYER x N_EMBD with 8 heads and positions up to
# 4 T, ZeRO stage STAGE, micro-batch 1, one thread per rank, STEPS steps.
# Last line: one JSON object {"bench": "sequence_parallel", ...}.
#   T=1024 N_LAYER=6 N_EMBD=512 STAGE=0 STEPS=2 bench/sequence_parallel.sh   (ZEROTRAIN=path: no build)
set -euo pipefail
source "$(dirname "$0")/common.sh"
T="${T:-1024}"
N_LAYER="${N_LAYER:-6}"
N_EMBD="${N_EMBD:-512}"
STAGE="${STAGE:-0}"
STEPS="${STEPS:-2}"
if [ -z "${ZEROTRAIN:-}" ]; then
  zt_build zerotrain_cli
  ZEROTRAIN="$ZT_BENCH_BUILD/zerotrain"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
W=$(mktemp -d /tmp/zt_sp_capacity.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "machine: $(zt_machine)"
L=$((4 * T))

# args SEQ SP ATTENTION: the run's settings (the demo's config, which estimate reads by default).
args() {
  echo --set model.n_layer="$N_LAYER" --set model.n_head=8 --set model.n_embd="$N_EMBD" \
    --set model.n_positions="$L" --set data.seq_len="$1" --set sequence_parallel_size="$2" \
    --set training.attention="$3" --set train_micro_batch_size_per_gpu=1 --set gradient_accumulation_steps=1 \
    --set zero_optimization.stage="$STAGE" --set training.steps="$STEPS" --set training.eval_interval=0 \
    --set training.sample_tokens=0 --set training.save_at_end=false --set training.output_dir="$W/out"
}
# estimate WORLD SEQ SP ATTENTION: rank 0's predicted activations and total, in bytes.
estimate() {
  (cd "$W" && "$ZEROTRAIN" estimate --world "$1" --json $(args "$2" "$3" "$4")) | "$ZT_PYTHON" -c '
import json, sys
r = json.load(sys.stdin)["stage_memory"][0]
print(int(r["activation_bytes"]), int(r["total_bytes"]))'
}
# measure NP SEQ SP ATTENTION: rank 0's activation arena and peak RSS from the run report.
measure() {
  local runner=""
  [ "$1" -gt 1 ] && runner="mpirun --allow-run-as-root -np $1 --oversubscribe --bind-to none"
  (cd "$W" && $runner "$ZEROTRAIN" train --demo $(args "$2" "$3" "$4") >"$W/run.log" 2>&1) || { tail -5 "$W/run.log"; exit 1; }
  "$ZT_PYTHON" - "$W/out/run_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
print(int(r["activation_bytes"]), int(r["peak_rss_bytes"]))
PY
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

declare -A R
for att in flash materialized; do
  read -r e1 t1 < <(estimate 1 "$T" 1 "$att")
  read -r e4 t4 < <(estimate 4 "$L" 4 "$att")
  R[$att]="$e1 $t1 $e4 $t4"
  echo "$att: one rank at T=$T: activations $(mib "$e1"), total $(mib "$t1"); sp 4 at T=$L: activations $(mib "$e4"), total $(mib "$t4") per rank (estimate)"
done
read -r m1 rss1 < <(measure 1 "$T" 1 flash)
read -r m4 rss4 < <(measure 4 "$L" 4 flash)
read -r fe1 ft1 fe4 ft4 <<<"${R[flash]}"
read -r me1 mt1 me4 mt4 <<<"${R[materialized]}"
echo "flash, measured: one rank at T=$T: arena $(mib "$m1"), peak RSS $(mib "$rss1"); sp 4 at T=$L: arena $(mib "$m4"), peak RSS $(mib "$rss4") (rank 0)"
echo "{\"bench\": \"sequence_parallel\", \"T\": $T, \"T_sp4\": $L, \"n_layer\": $N_LAYER, \"n_embd\": $N_EMBD, \"stage\": $STAGE," \
  "\"flash_act_1\": $fe1, \"flash_total_1\": $ft1, \"flash_act_sp4\": $fe4, \"flash_total_sp4\": $ft4," \
  "\"materialized_act_1\": $me1, \"materialized_act_sp4\": $me4, \"measured_act_1\": $m1, \"measured_act_sp4\": $m4," \
  "\"estimate_exact\": $([ "$m1" = "$fe1" ] && [ "$m4" = "$fe4" ] && echo true || echo false)," \
  "\"rss_1\": $rss1, \"rss_sp4\": $rss4, \"total_ratio\": $(awk -v a="$ft4" -v b="$ft1" 'BEGIN { printf "%.3f", a / b }')}"
