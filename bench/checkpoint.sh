#!/usr/bin/env bash
# Benchmark (checkpoint issue): a full GPT-2 small + AdamW checkpoint (1.49 GB) saved and
# loaded by zerotrain against torch.save/torch.load of the same state (what DeepSpeed
# writes, made durable with fsync), and against this machine's durable-write and read
# bound for the same bytes, measured in zerotrain's process. Alternates the two
# implementations ROUNDS times; reports medians. Last line: one JSON object.
#   ROUNDS=3 THREADS=2 DIR=/tmp bench/checkpoint.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-2}"
DIR="${DIR:-/tmp}"
zt_build checkpoint_bench
export OMP_NUM_THREADS="$THREADS"
log=$(mktemp)
echo "machine: $(zt_machine); directory $DIR on $(df -T "$DIR" | awk 'NR==2{print $2}')"
zt_alternate "$ROUNDS" "$log" '"$ZT_BENCH_BUILD/checkpoint_bench" --threads "$THREADS" --reps 3 --dir "$DIR/zt_checkpoint_bench"' \
  '"$ZT_PYTHON" "$ZT_ROOT/bench/torch_checkpoint.py" --threads "$THREADS" --reps 3 --dir "$DIR/zt_checkpoint_bench_torch"'
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
z = [r for r in rows if r["impl"] == "zerotrain"]
t = [r for r in rows if r["impl"] == "pytorch"]
med = lambda rs, k: statistics.median(r[k] for r in rs)
zs, zl, ts, tl = med(z, "save_ms"), med(z, "load_ms"), med(t, "save_ms"), med(t, "load_ms")
w, rd = med(z, "raw_write_ms"), med(z, "raw_read_ms")
print(f"bytes: zerotrain {z[0]['bytes']/1e9:.3f} GB (checksummed, manifest), torch {t[0]['bytes']/1e9:.3f} GB (pickle)")
print(f"save  zerotrain {zs:8.0f} ms   torch.save+fsync {ts:8.0f} ms   speed-up {ts/zs:.2f}x   raw durable write {w:8.0f} ms ({w/zs:.2f} of bound)")
print(f"load  zerotrain {zl:8.0f} ms   torch.load       {tl:8.0f} ms   speed-up {tl/zl:.2f}x   raw read {rd:8.0f} ms ({rd/zl:.2f} of bound)")
print(f"zerotrain save runs {min(r['save_ms'] for r in z):.0f}-{max(r['save_ms'] for r in z):.0f} ms, load {min(r['load_ms'] for r in z):.0f}-{max(r['load_ms'] for r in z):.0f} ms over {len(z)} runs")
print(json.dumps({"bench": "checkpoint", "bytes": z[0]["bytes"], "save_ms": round(zs, 1), "load_ms": round(zl, 1),
                  "torch_save_ms": round(ts, 1), "torch_load_ms": round(tl, 1), "save_speedup_vs_torch": round(ts / zs, 3),
                  "load_speedup_vs_torch": round(tl / zl, 3), "save_fraction_of_bound": round(w / zs, 3),
                  "load_fraction_of_bound": round(rd / zl, 3)}))
PY
rm -f "$log"
