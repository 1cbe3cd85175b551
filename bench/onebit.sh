#!/usr/bin/env bash
# Benchmark (issue 18, acceptance 3): 1-bit Adam against Adam on the demo corpus over NP
# ranks: the same model, data, global batch, learning-rate schedule and seed; only the
# optimizer differs (AdamW vs OneBitAdam with freeze_step FREEZE). Reports the final
# validation losses and the communication volume after freeze_step, from each run's
# run_report.json (rank 0's logical bytes, counted as the ZeRO paper does: an all-reduce
# of B bytes is 2B; send, recv and all-gather their bytes). The warm-up steps of 1-bit
# Adam move what the same number of Adam steps move, so the volume after freeze_step is
#   onebit_after = onebit_total - adam_total * FREEZE / STEPS
#   adam_after   = adam_total * (STEPS - FREEZE) / STEPS
# (validation all-reduces a few scalars; they are noise at this scale). ROUNDS runs of
# each, alternating; medians. Last line: {"bench":"onebit","volume_ratio":...,
# "val_loss_ratio":...}; bars: volume_ratio <= 1/16, val_loss_ratio within 1.03.
# OPTS adds ZeroOneAdam and/or OneBitLamb (var_freeze_step / freeze_step FREEZE) to each
# round, reported with their validation loss and total volume against AdamW's (0/1 Adam's
# warm-up is not all full all-reduces, so the after-freeze formula does not apply).
#   NP=4 STEPS=200 FREEZE=40 ROUNDS=1 OPTS="ZeroOneAdam OneBitLamb" bench/onebit.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
NP="${NP:-4}"
STEPS="${STEPS:-200}"
FREEZE="${FREEZE:-40}"
ROUNDS="${ROUNDS:-1}"
OPTS="${OPTS:-}"
zt_build zerotrain_cli
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(zt_machine)"
echo "demo model and corpus, $NP ranks x micro-batch 16 x 128 tokens, $STEPS steps, 1-bit Adam freeze_step $FREEZE"
common=(--set training.steps="$STEPS" --set scheduler.params.total_num_steps="$STEPS"
        --set training.eval_interval="$STEPS" --set training.sample_tokens=0 --set training.save_at_end=false)
log="$work/log.jsonl"
for round in $(seq "$ROUNDS"); do
  for opt in AdamW OneBitAdam $OPTS; do
    out="$work/$opt.$round"
    extra=(--set optimizer.type="$opt")
    case "$opt" in
      OneBitAdam|OneBitLamb) extra+=(--set optimizer.params.freeze_step="$FREEZE") ;;
      ZeroOneAdam) extra+=(--set optimizer.params.var_freeze_step="$FREEZE") ;;
    esac
    start=$(date +%s.%N)
    mpirun --oversubscribe --mca btl self,vader -np "$NP" "$ZT_BENCH_BUILD/zerotrain" train "${common[@]}" \
      "${extra[@]}" --set training.output_dir="$out" >"$out.txt" 2>&1
    end=$(date +%s.%N)
    "$ZT_PYTHON" - "$out" "$opt" "$start" "$end" >>"$log" <<'PY'
import json, re, sys
out, opt, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
text = open(out + ".txt").read()
val = [float(v) for v in re.findall(r"val loss ([0-9.]+)", text)][-1]
r = json.load(open(out + "/run_report.json"))
bytes0 = sum(r["ranks"][0]["comm_logical_bytes"].values())
print(json.dumps({"opt": opt, "val_loss": val, "comm_bytes": bytes0, "seconds": end - start}))
PY
    echo "round $round: $(tail -1 "$log")" >&2
  done
done
"$ZT_PYTHON" - "$log" "$STEPS" "$FREEZE" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps, freeze = int(sys.argv[2]), int(sys.argv[3])
med = lambda opt, k: statistics.median(r[k] for r in rows if r["opt"] == opt)
adam, onebit = med("AdamW", "comm_bytes"), med("OneBitAdam", "comm_bytes")
adam_after = adam * (steps - freeze) / steps
onebit_after = onebit - adam * freeze / steps
for opt in dict.fromkeys(r["opt"] for r in rows):
    print(f"{opt:11} val loss {med(opt, 'val_loss'):.4f}  rank-0 volume {med(opt, 'comm_bytes') / 2**20:9.1f} MiB  "
          f"wall {med(opt, 'seconds'):6.1f} s  val loss / AdamW {med(opt, 'val_loss') / med('AdamW', 'val_loss'):.4f}  "
          f"volume / AdamW {med(opt, 'comm_bytes') / adam:.4f}")
print(f"after freeze_step: Adam {adam_after / 2**20:.1f} MiB, 1-bit Adam {onebit_after / 2**20:.1f} MiB")
print(json.dumps({"bench": "onebit", "volume_ratio": round(onebit_after / adam_after, 4),
                  "val_loss_ratio": round(med("OneBitAdam", "val_loss") / med("AdamW", "val_loss"), 4),
                  "adam_val_loss": med("AdamW", "val_loss"), "onebit_val_loss": med("OneBitAdam", "val_loss")}))
PY
