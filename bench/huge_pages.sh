#!/usr/bin/env bash
# Benchmark (issue 32): the training step with zerotrain's huge-page advice (core/huge_pages.h)
# against the same binary with the advice turned into a no-op (bench/no_thp_advice.c,
# preloaded), alternating in every round on the same machine. GPT-2 small (12 x 768, vocab
# 50257) at B=8 T=128 in fp32 and bf16, and a stories110M-like Llama with 4 kv heads in fp32.
# Prints the kernel's THP mode, then per shape the median ms/step, optimizer ms and peak RSS
# of each, and the median of the pairwise ratios advised/not; the last line is one JSON object.
# With THP "always" or "never" the two runs are the same program (nothing to measure).
#   ROUNDS=3 STEPS=4 THREADS=2 bench/huge_pages.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-4}"
THREADS="${THREADS:-2}"
zt_build train_step_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC "$ZT_ROOT/bench/no_thp_advice.c" -o "$work/no_thp_advice.so" -ldl
echo "machine: $(zt_machine); THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unavailable)"
LLAMA="--family llama --layers 12 --heads 12 --embd 768 --intermediate 2048 --vocab 32000 --tied --batch 8 --seq 128 --kv-heads 4"
SHAPES=(
  "gpt2_fp32 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128 --precision fp32"
  "gpt2_bf16 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128 --precision bf16"
  "llama_gqa_fp32 $LLAMA --precision fp32"
)
run="OMP_NUM_THREADS=$THREADS $ZT_BENCH_BUILD/train_step_bench --steps $STEPS --warmup 1 --threads $THREADS"
for shape in "${SHAPES[@]}"; do
  name=${shape%% *}
  args=${shape#* }
  zt_alternate "$ROUNDS" "$work/$name.log" \
    "LD_PRELOAD=$work/no_thp_advice.so $run $args 2>/dev/null | tail -1 | sed 's/^{/{\"advice\":0,/'" \
    "$run $args 2>/dev/null | tail -1 | sed 's/^{/{\"advice\":1,/'"
done
"$ZT_PYTHON" - "$work" "${SHAPES[@]}" <<'PY'
import json, statistics, sys
work, shapes = sys.argv[1], [s.split()[0] for s in sys.argv[2:]]
out = {"bench": "huge_pages", "shapes": {}}
for name in shapes:
    rows = [json.loads(l) for l in open(f"{work}/{name}.log")]
    off = [r for r in rows if r["advice"] == 0]
    on = [r for r in rows if r["advice"] == 1]
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    ratio = statistics.median(b["ms"] / a["ms"] for a, b in zip(off, on))
    print(f"{name}: ms/step {med(off, 'ms'):.0f} -> {med(on, 'ms'):.0f} (advised/not {ratio:.3f}); optimizer ms "
          f"{med(off, 'optimizer_ms'):.1f} -> {med(on, 'optimizer_ms'):.1f}; peak RSS MiB "
          f"{med(off, 'peak_rss_mb'):.0f} -> {med(on, 'peak_rss_mb'):.0f}")
    out["shapes"][name] = {"ms_not_advised": round(med(off, "ms"), 1), "ms_advised": round(med(on, "ms"), 1),
                           "advised_over_not": round(ratio, 3), "optimizer_ms_not_advised": round(med(off, "optimizer_ms"), 1),
                           "optimizer_ms_advised": round(med(on, "optimizer_ms"), 1),
                           "peak_rss_mb_not_advised": med(off, "peak_rss_mb"), "peak_rss_mb_advised": med(on, "peak_rss_mb")}
print(json.dumps(out))
PY
