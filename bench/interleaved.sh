#!/usr/bin/env bash
# Interleaved 1F1B (issue 31, acceptance 3): the measured pipeline bubble of 1F1B and of
# interleaved 1F1B with V chunks per rank, at PP stages and M micro-batches per step,
# beside Megatron's (PP-1)/(V M) of the compute. GPT with a byte vocabulary (the head is
# 1/12 of a block, so the stages are even), LAYERS x EMBD (HEADS heads), T SEQ, micro-batch
# 4, a uniform partition, synthetic tokens, one thread per rank (bench/parallel3d_bench.cc).
# The formula counts no messages, and interleaving sends V times as many: at T 256 a
# chunk's forward and backward take ~0.2 s on a capped rank, which keeps the messages'
# share small; at T 128 it shows (bench/RESULTS.md).
#
# The measured bubble of one run: the pipeline's length over the compute of its busiest
# rank, less one. Rank 0's forward, backward and receive waits span the pipeline (it
# starts first and ends last); the busiest rank's forward and backward time is what the
# pipeline would take without a bubble. Each is that rank's median over the timed steps.
#
# PP ranks on a machine with fewer cores: a rank alone runs faster than one among four, and
# a rank blocked in a receive still polls, so sharing the cores would bend the bubble. Each
# rank therefore runs in its own cpu cgroup (v1 cpu controller, or v2) capped at
# QUOTA/PERIOD of a core (default 1000/2200 us: four ranks use 1.8 of 2 cores): every rank
# computes at the same pace whether the others compute or wait, a machine of PP slow cores.
# The short period keeps the cap's granularity (a rank resumes at most 1.2 ms late) small
# beside an operation (tens of ms; ~0.1 s at T 256). Where cgroups cannot be made, the bench says so and
# stops; on a machine with PP free cores set SHARE=0 to run uncapped.
# ROUNDS rounds alternate the two layouts; the medians are reported. Last line: one JSON
# object {"bench": "interleaved", ...}.
#   ROUNDS=5 STEPS=3 PP=4 V=2 M=8 LAYERS=16 EMBD=256 HEADS=4 SEQ=256 bench/interleaved.sh
#   (PARALLEL3D_BENCH=path: no build)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-5}"
STEPS="${STEPS:-3}"
PP="${PP:-4}"
V="${V:-2}"
M="${M:-8}"
LAYERS="${LAYERS:-16}"
EMBD="${EMBD:-256}"
HEADS="${HEADS:-4}"
SEQ="${SEQ:-256}"
QUOTA="${QUOTA:-1000}"
PERIOD="${PERIOD:-2200}"
SHARE="${SHARE:-1}"
if [ -z "${PARALLEL3D_BENCH:-}" ]; then
  zt_build parallel3d_bench
  PARALLEL3D_BENCH="$ZT_BENCH_BUILD/parallel3d_bench"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
W=$(mktemp -d /tmp/zt_interleaved.XXXXXX)
CG=""
cleanup() { [ -n "$CG" ] && rmdir "$CG"/r* "$CG" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
# The per-rank cap: a cgroup per rank under CG, entered by share.sh before exec.
if [ "$SHARE" = 1 ]; then
  if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
    CG=/sys/fs/cgroup/cpu/zt_interleaved_$$
    mkdir "$CG"
    cap='echo '"$PERIOD"' >"$d/cpu.cfs_period_us"; echo '"$QUOTA"' >"$d/cpu.cfs_quota_us"; echo $$ >"$d/tasks"'
  elif [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    CG=/sys/fs/cgroup/zt_interleaved_$$
    mkdir "$CG"
    echo +cpu >"$CG/cgroup.subtree_control" 2>/dev/null || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
    cap='echo "'"$QUOTA $PERIOD"'" >"$d/cpu.max"; echo $$ >"$d/cgroup.procs"'
  else
    echo "interleaved.sh: no writable cpu cgroup here; run with SHARE=0 on a machine with $PP free cores" >&2
    exit 1
  fi
  cat >"$W/share.sh" <<EOF
#!/usr/bin/env bash
d=$CG/r\${OMPI_COMM_WORLD_RANK:-0}
mkdir -p "\$d"
$cap
exec "\$@"
EOF
  chmod +x "$W/share.sh"
  WRAP=("$W/share.sh")
else
  WRAP=()
fi
run() {  # run V_CHUNKS: one JSON line per rank into the log, prefixed by the chunk count
  mpirun --oversubscribe --bind-to none --mca btl self,vader -np "$PP" "${WRAP[@]}" "$PARALLEL3D_BENCH" \
    --pp "$PP" --virtual "$1" --accum "$M" --micro 4 --seq "$SEQ" --layers "$LAYERS" --embd "$EMBD" --heads "$HEADS" \
    --vocab 256 --partition uniform --steps "$STEPS" | sed "s/^/v$1 /"
}
echo "machine: $(zt_machine); $PP ranks, each capped at $QUOTA/$PERIOD us of a core (SHARE=$SHARE)"
for round in $(seq "$ROUNDS"); do
  run 1 | tee -a "$W/log" >&2
  run "$V" | tee -a "$W/log" >&2
done
"$ZT_PYTHON" - "$W/log" "$ROUNDS" "$PP" "$V" "$M" <<'PY'
import json, statistics, sys
log, rounds, pp, v, m = sys.argv[1], *map(int, sys.argv[2:])
runs = {}  # (layout, round) -> ranks
count = {}
for line in open(log):
    name, js = line.split(" ", 1)
    r = json.loads(js)
    if r["rank"] == 0:
        count[name] = count.get(name, 0) + 1
    runs.setdefault((name, count.get(name, 1)), []).append(r)
def bubble(ranks):
    busiest = max(r["compute_ms"] for r in ranks)
    first = next(r for r in ranks if r["rank"] == 0)
    return (first["compute_ms"] + first["wait_ms"]) / busiest - 1.0
out = {"bench": "interleaved", "pp": pp, "micro_batches": m, "virtual": v}
print(f"{'layout':8} {'bubble':>7} {'formula':>8} {'ratio':>6} {'ms/step':>8}   (medians of {rounds} runs; per run: {'bubble':s})")
for name, chunks in (("v1", 1), (f"v{v}", v)):
    bs = [bubble(rs) for (n, _), rs in runs.items() if n == name]
    ms = [statistics.median(r["ms"] for r in rs) for (n, _), rs in runs.items() if n == name]
    formula = (pp - 1) / (chunks * m)
    b = statistics.median(bs)
    print(f"{name:8} {b:7.3f} {formula:8.4f} {b / formula:6.3f} {statistics.median(ms):8.0f}   "
          + " ".join(f"{x:.3f}" for x in bs))
    out[name] = {"bubble": round(b, 4), "formula": round(formula, 4), "ratio": round(b / formula, 3),
                 "ms_per_step": round(statistics.median(ms), 1)}
out["step_ratio"] = round(out[f"v{v}"]["ms_per_step"] / out["v1"]["ms_per_step"], 3)
out["step_ratio_formula"] = round((1 + (pp - 1) / (v * m)) / (1 + (pp - 1) / m), 3)
print(json.dumps(out))
PY
