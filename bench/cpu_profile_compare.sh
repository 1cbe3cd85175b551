#!/usr/bin/env bash
# Benchmark (issue 32, acceptance 3 without AMX): the milliseconds of the training step
# outside the GEMMs, from the per-operation profile (ZT_CPU_PROFILE=1), of this tree against
# an earlier revision's, alternating old and new in every round on the same machine. GPT-2
# small (12 x 768, vocab 50257) at B=8 T=128, bench/precision.sh's larger shape, in fp32 and
# bf16; each run is STEPS steps after one warm-up step, and the profile covers them all.
# The earlier revision is checked out in a git worktree and built in Release (first run: a
# full build); NEW_BUILD names a build directory of this tree that already has
# train_step_bench (else bench/common.sh builds one). Prints per precision and build the
# median non-GEMM ms per step, the ratio new/old (issue 32's bar: at most 0.5), and the
# largest entries of each build's last round; the last line is one JSON object.
#   BASE=b725f9d ROUNDS=3 STEPS=3 THREADS=2 NEW_BUILD=build bench/cpu_profile_compare.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
BASE="${BASE:?set BASE to the revision to compare against}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-3}"
THREADS="${THREADS:-2}"
OLD_TREE="${OLD_TREE:-/tmp/zt-compare-$BASE}"
if [ -n "${NEW_BUILD:-}" ]; then
  ZT_BENCH_BUILD=$(cd "$NEW_BUILD" && pwd)
  ninja -C "$ZT_BENCH_BUILD" train_step_bench >/dev/null
else
  zt_build train_step_bench
fi
[[ -d "$OLD_TREE" ]] || git -C "$ZT_ROOT" worktree add -f "$OLD_TREE" "$BASE" >/dev/null
ZT_ROOT="$OLD_TREE" ZT_BENCH_BUILD="$OLD_TREE/build-bench" zt_build train_step_bench
SHAPE="--layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128"
log=$(mktemp)
echo "machine: $(zt_machine); base $BASE ($(git -C "$OLD_TREE" log -1 --format=%h)), new $(git -C "$ZT_ROOT" log -1 --format=%h)+"
profile() {  # profile BUILD_DIR PRECISION LABEL: one run's profile table, each line tagged
  ZT_CPU_PROFILE=1 OMP_NUM_THREADS="$THREADS" "$1/train_step_bench" $SHAPE --precision "$2" --steps "$STEPS" \
    --warmup 1 --threads "$THREADS" 2>&1 >/dev/null | sed -n '/CPU table profile/,$p' | sed "s/^/$3 /"
}
for round in $(seq "$ROUNDS"); do
  for p in fp32 bf16; do
    profile "$OLD_TREE/build-bench" "$p" "$round old $p" >>"$log"
    profile "$ZT_BENCH_BUILD" "$p" "$round new $p" >>"$log"
    echo "round $round $p: $(grep -E "^$round (old|new) $p CPU" "$log" | sed 's/.*the rest \([0-9.]*\) ms/\1/' | tr '\n' ' ')" >&2
  done
done
"$ZT_PYTHON" - "$log" "$((STEPS + 1))" <<'PY'
import json, re, statistics, sys
rest, last = {}, {}
for line in open(sys.argv[1]):
    rnd, build, prec, text = line.split(" ", 3)
    m = re.search(r"the rest ([0-9.]+) ms", text)
    if m:
        rest.setdefault((prec, build), []).append(float(m.group(1)) / int(sys.argv[2]))
        last[(prec, build)] = []
        continue
    e = re.match(r"\s+(\w+)\s+(\d+) calls\s+([0-9.]+) ms\s+[0-9.]+%(\s+\(GEMMs\))?", text)
    if e and not e.group(4):
        last[(prec, build)].append((e.group(1), float(e.group(3)) / int(sys.argv[2])))
out = {"bench": "cpu_profile_compare", "non_gemm_ms_per_step": {}}
for prec in ("fp32", "bf16"):
    old, new = statistics.median(rest[(prec, "old")]), statistics.median(rest[(prec, "new")])
    print(f"{prec}: non-GEMM ms per step, median of {len(rest[(prec, 'old')])}: old {old:.1f}, new {new:.1f}, new/old {new / old:.3f}")
    for build in ("old", "new"):
        top = sorted(last[(prec, build)], key=lambda t: -t[1])[:8]
        print(f"  {build}: " + ", ".join(f"{n} {ms:.1f}" for n, ms in top))
    out["non_gemm_ms_per_step"][prec] = {"old": round(old, 1), "new": round(new, 1), "new_over_old": round(new / old, 3)}
print(json.dumps(out))
PY
