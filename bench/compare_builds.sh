#!/usr/bin/env bash
# Benchmark (issue 27, acceptance 4: "speed is unchanged"): the training step of this tree
# against an earlier revision's, alternating in one run on the same machine. The earlier
# revision is checked out in a git worktree and built in Release beside it (first run: a full
# build); both run train_step_bench at the same shapes: GPT-2 small at B=8 T=128, a small model
# (4 x 256, vocab 50257) at B=8 T=128, and a stories110M-like Llama with 4 kv heads at B=8
# T=128. Prints per shape the median ms/step of each build and the median of the pairwise
# ratios new/old; the last line is one JSON object. ZERO=1 adds bench/zero.sh's runs (GPT-2
# small, 2 ranks x 1 thread, ZeRO stages 0-3) of both builds, alternating the same way.
# PRECISION=bf16 (or fp16) runs the training steps in that precision (default fp32).
#   BASE=04a6cc1 ROUNDS=4 STEPS=3 THREADS=2 ZERO=1 bench/compare_builds.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
BASE="${BASE:?set BASE to the revision to compare against}"
ROUNDS="${ROUNDS:-4}"
STEPS="${STEPS:-3}"
THREADS="${THREADS:-2}"
OLD_TREE="${OLD_TREE:-/tmp/zt-compare-$BASE}"
ZERO="${ZERO:-0}"
PRECISION="${PRECISION:-fp32}"
TARGETS=(train_step_bench)
[[ "$ZERO" == 1 ]] && TARGETS+=(zero_bench)
zt_build "${TARGETS[@]}"
[[ -d "$OLD_TREE" ]] || git -C "$ZT_ROOT" worktree add -f "$OLD_TREE" "$BASE" >/dev/null
ZT_ROOT="$OLD_TREE" ZT_BENCH_BUILD="$OLD_TREE/build-bench" zt_build "${TARGETS[@]}"
export OMP_NUM_THREADS="$THREADS"
LLAMA="--family llama --layers 12 --heads 12 --embd 768 --intermediate 2048 --vocab 32000 --tied --batch 8 --seq 128"
SHAPES=(
  "gpt2_b8t128 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128"
  "small --layers 4 --heads 4 --embd 256 --vocab 50257 --batch 8 --seq 128"
  "llama_gqa_b8t128 $LLAMA --kv-heads 4"
)
log=$(mktemp)
echo "machine: $(zt_machine); $PRECISION; base $BASE ($(git -C "$OLD_TREE" log -1 --format=%h)), new $(git -C "$ZT_ROOT" log -1 --format=%h)"
for entry in "${SHAPES[@]}"; do
  name=${entry%% *}
  args=${entry#* }
  run="--steps $STEPS --warmup 1 --threads $THREADS --precision $PRECISION"
  zt_alternate "$ROUNDS" "$log" \
    "echo $name old \$('$OLD_TREE/build-bench/train_step_bench' $args $run)" \
    "echo $name new \$('$ZT_BENCH_BUILD/train_step_bench' $args $run)"
done
if [[ "$ZERO" == 1 ]]; then
  MPIRUN="mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 -x OMP_NUM_THREADS=1"
  for stage in 0 1 2 3; do
    zt_alternate "$ROUNDS" "$log" \
      "echo zero_stage$stage old \$($MPIRUN '$OLD_TREE/build-bench/zero_bench' --stage $stage --steps $STEPS)" \
      "echo zero_stage$stage new \$($MPIRUN '$ZT_BENCH_BUILD/zero_bench' --stage $stage --steps $STEPS)"
  done
fi
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, which, js = line.split(" ", 2)
    rows.setdefault(name, {}).setdefault(which, []).append(json.loads(js)["ms"])
out = {"bench": "compare_builds"}
for name, r in rows.items():
    ratios = [b / a for a, b in zip(r["old"], r["new"])]
    old, new, ratio = statistics.median(r["old"]), statistics.median(r["new"]), statistics.median(ratios)
    print(f"{name}: old {old:.1f} ms, new {new:.1f} ms, pairwise new/old median {ratio:.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f})")
    out[f"ratio_{name}"] = round(ratio, 3)
print(json.dumps(out))
PY
