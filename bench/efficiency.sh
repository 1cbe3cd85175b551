#!/usr/bin/env bash
# Benchmark (issue 33, acceptance 5): curriculum learning and random-LTD against a plain run
# on the demo model and corpus (4 blocks, 256 wide, byte-level fortunes, micro-batch 16 x 128
# tokens, one process), at equal compute. Compute is counted in token-blocks: a token through
# one transformer block or through the head (embeddings ignored), so
#   plain       STEPS x 16 x 128 x (L + 1)
#   curriculum  sum over steps of 16 x d(s) x (L + 1),    d = the seqlen schedule
#   random-LTD  sum over steps of 16 x (128 x (L + 1 - k) + r(s) x k),  k = LTD blocks
# and each efficiency run gets the number of steps whose total first reaches the plain
# run's (the schedules come from tests/efficiency/*_oracle.py, the independent statements
# of DeepSpeed's rules). The learning-rate schedule (the demo's warm-up and cosine) spans
# each run's own steps. Reported per run: steps, token-blocks, training time (the sum of the
# steps' forward, backward and optimizer times from metrics.csv), tokens/s (sequence tokens
# fed, after the curriculum's truncation, per second of training), and the final validation loss on the demo's
# 16 fixed validation batches; ratios against the plain run. ROUNDS rounds alternate the
# three runs; medians.
#   STEPS=300 ROUNDS=3 bench/efficiency.sh
# Curriculum: fixed_linear, 32 -> 128 tokens over the first STEPS/2 steps, difficulty_step 8.
# Random-LTD: blocks 1 and 2 of 4, reserved length 32 -> 128 over STEPS/2 steps, seq_per_step 16.
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS="${STEPS:-300}"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-$(nproc)}"
zt_build zerotrain_cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(zt_machine)"
echo "demo model and corpus, 1 process x $THREADS threads, micro-batch 16 x 128 tokens, plain $STEPS steps"
half=$((STEPS / 2))
curriculum="{\"enabled\": true, \"curriculum_type\": \"seqlen\", \"min_difficulty\": 32, \"max_difficulty\": 128,
  \"schedule_type\": \"fixed_linear\", \"schedule_config\": {\"total_curriculum_step\": $half, \"difficulty_step\": 8}}"
ltd="{\"enabled\": true, \"data_routing\": {\"enabled\": true, \"random_ltd\": {\"enabled\": true, \"total_layer_num\": 4,
  \"random_ltd_layer_num\": 2, \"random_ltd_layer_id\": [1, 2], \"model_mask_name\": \"attention_mask\",
  \"model_type\": \"decoder\", \"hidden_state_order\": \"batch_seq_dim\", \"random_ltd_schedule\": {\"min_value\": 32,
  \"max_value\": 128, \"schedule_type\": \"fixed_linear\", \"schedule_config\": {\"require_steps\": $half, \"seq_per_step\": 16}}}}}"
steps_for=$("$ZT_PYTHON" - "$ZT_ROOT/tests/efficiency" "$STEPS" "$half" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from curriculum_oracle import Schedule
from random_ltd_oracle import RandomLTDSchedule
steps, half, B, T, L, k = int(sys.argv[2]), int(sys.argv[3]), 16, 128, 4, 2
budget = steps * B * T * (L + 1)
cl = Schedule({"min_difficulty": 32, "max_difficulty": 128, "schedule_type": "fixed_linear",
               "schedule_config": {"total_curriculum_step": half, "difficulty_step": 8}})
s, used, fed = 0, 0, 0
while used < budget:  # zerotrain's step after s steps runs at min(T, update(s + 1))
    d = min(T, cl.update(s + 1))
    used, fed, s = used + B * d * (L + 1), fed + B * d, s + 1
cl_steps, cl_used, cl_fed = s, used, fed
ltd = RandomLTDSchedule({"random_ltd_schedule": {"min_value": 32, "max_value": 128,
                         "schedule_config": {"require_steps": half, "seq_per_step": 16}}})
s, used = 0, 0
while used < budget:  # the step after s steps keeps update(s) tokens in the LTD blocks
    used += B * (T * (L + 1 - k) + ltd.update(s) * k)
    s += 1
print(cl_steps, cl_used, cl_fed, s, used, s * B * T, budget, steps * B * T)
PY
)
read -r cl_steps cl_used cl_fed ltd_steps ltd_used ltd_fed budget fed <<<"$steps_for"
log="$work/log.jsonl"
for round in $(seq "$ROUNDS"); do
  for run in plain curriculum random_ltd; do
    out="$work/$run.$round"
    case "$run" in
      plain) n=$STEPS; used=$budget; tokens=$fed; extra=() ;;
      curriculum) n=$cl_steps; used=$cl_used; tokens=$cl_fed; extra=(--set "curriculum_learning=$curriculum") ;;
      random_ltd) n=$ltd_steps; used=$ltd_used; tokens=$ltd_fed; extra=(--set "data_efficiency=$ltd") ;;
    esac
    OMP_NUM_THREADS=$THREADS "$ZT_BENCH_BUILD/zerotrain" train --set training.steps="$n" \
      --set scheduler.params.total_num_steps="$n" --set training.eval_interval="$n" --set training.sample_tokens=0 \
      --set training.save_at_end=false --set training.output_dir="$out" "${extra[@]}" >"$out.txt" 2>&1
    "$ZT_PYTHON" - "$out" "$run" "$n" "$used" "$tokens" >>"$log" <<'PY'
import csv, json, re, sys
out, run, steps, used, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = open(out + ".txt").read()
val = [float(v) for v in re.findall(r"val loss ([0-9.]+)", text)][-1]
rows = list(csv.DictReader(l for l in open(out + "/metrics.csv") if not l.startswith("#")))
secs = sum((float(r["forward_ms"]) + float(r["backward_ms"]) + float(r["optimizer_ms"])) / 1e3 for r in rows)
print(json.dumps({"run": run, "steps": steps, "token_blocks": used, "seconds": secs, "tokens": tokens, "val_loss": val}))
PY
    echo "round $round: $(tail -1 "$log")" >&2
  done
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda run, k: statistics.median(r[k] for r in rows if r["run"] == run)
print(f"{'run':11} {'steps':>5} {'token-blocks':>13} {'train s':>8} {'tokens/s':>9} {'val loss':>8}  vs plain: tokens/s  val loss")
for run in ("plain", "curriculum", "random_ltd"):
    tps = med(run, "tokens") / med(run, "seconds")
    base = med("plain", "tokens") / med("plain", "seconds")
    print(f"{run:11} {med(run, 'steps'):5.0f} {med(run, 'token_blocks'):13.0f} {med(run, 'seconds'):8.1f} {tps:9.0f} "
          f"{med(run, 'val_loss'):8.4f}  {tps / base:17.3f} {med(run, 'val_loss') - med('plain', 'val_loss'):+9.4f}")
print(json.dumps({"bench": "efficiency", **{f"{run}_val_loss": med(run, "val_loss") for run in ("plain", "curriculum", "random_ltd")}}))
PY
