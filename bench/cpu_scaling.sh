#!/usr/bin/env bash
# Core scaling (issue 32, acceptance 2): zerotrain's fp32 AdamW training step of GPT-2 small
# (12 x 768, vocab 50257) at B=4 T=512 on 1, 2, 4, ... threads up to the CPUs this process
# may use, under each OpenBLAS build (LIBS: "openmp", the one zerotrain links, Debian's
# default; "pthread", Ubuntu's default, Debian's libopenblas0-pthread loaded through
# LD_LIBRARY_PATH), alternating the thread counts in every round. Beside each step the FMA
# peak measured at the same thread count (bench/fma_peak.cc). Prints per build and thread
# count: the median ms/step, tokens/s, the speed-up over 2 threads (issue 32's bar: 6x at
# 16), and the model FLOP/s as a fraction of the measured peak (bar: 0.6 at 16). Last line:
# one JSON object {"bench": "cpu_scaling", ...}.
# PROFILE=1 adds one run per build and thread count under ZT_CPU_PROFILE=1 and prints
# each kernel-table entry's ms per step at every thread count with its speed-up over the
# smallest count, and the step's time outside the tables (host code between the kernels):
# where the scaling is lost, serial parts or kernels that stop speeding up.
#   ROUNDS=2 STEPS=3 LIBS="openmp pthread" THREAD_LIST="1 2 4 8 16" bench/cpu_scaling.sh
#   SHAPE="--layers 2 --heads 4 --embd 128 --vocab 1000 --batch 2 --seq 64" ...   (a quick check of the script)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-2}"
STEPS="${STEPS:-3}"
LIBS="${LIBS:-openmp pthread}"
CPUS=$(nproc)
THREAD_LIST="${THREAD_LIST:-$(t=1; while [ "$t" -lt "$CPUS" ]; do printf '%s ' "$t"; t=$((t * 2)); done; echo "$CPUS")}"
PTHREAD_DIR=/usr/lib/x86_64-linux-gnu/openblas-pthread
zt_build train_step_bench fma_peak
SHAPE="${SHAPE:---layers 12 --heads 12 --embd 768 --vocab 50257 --batch 4 --seq 512 --positions 1024}"
log=$(mktemp)
echo "machine: $(zt_machine)"
echo "threads: $THREAD_LIST; OpenBLAS builds: $LIBS"
for lib in $LIBS; do
  env_lib=()
  if [ "$lib" = pthread ]; then
    [ -e "$PTHREAD_DIR/libopenblas.so.0" ] || { echo "skipping pthread: libopenblas0-pthread is not installed"; continue; }
    env_lib=(LD_LIBRARY_PATH="$PTHREAD_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
  for t in $THREAD_LIST; do
    p=$(env "${env_lib[@]}" OMP_NUM_THREADS="$t" "$ZT_BENCH_BUILD/fma_peak" --threads "$t")
    echo "$lib $t peak $p" >>"$log"
  done
  for round in $(seq "$ROUNDS"); do
    for t in $THREAD_LIST; do
      z=$(env "${env_lib[@]}" OMP_NUM_THREADS="$t" "$ZT_BENCH_BUILD/train_step_bench" $SHAPE --steps "$STEPS" --warmup 1 \
          --threads "$t")
      echo "$lib $t step $z" >>"$log"
      echo "round $round, $lib OpenBLAS, $t threads: $(echo "$z" | sed 's/.*"ms": *\([0-9.]*\).*/\1/') ms" >&2
    done
  done
  [ "${PROFILE:-0}" = 1 ] || continue
  for t in $THREAD_LIST; do
    err=$(mktemp)
    z=$(env "${env_lib[@]}" ZT_CPU_PROFILE=1 OMP_NUM_THREADS="$t" "$ZT_BENCH_BUILD/train_step_bench" $SHAPE \
        --steps "$STEPS" --warmup 1 --threads "$t" --profile-steps-only 2>"$err")
    echo "$lib $t profstep $z" >>"$log"
    sed -n '/CPU table profile/,$p' "$err" | sed "s/^/$lib $t prof /" >>"$log"
    rm -f "$err"
  done
done
batch=$(echo "$SHAPE" | sed 's/.*--batch \([0-9]*\).*/\1/'); seq=$(echo "$SHAPE" | sed 's/.*--seq \([0-9]*\).*/\1/')
"$ZT_PYTHON" - "$log" "$((batch * seq))" "$SHAPE" "$STEPS" <<'PY'
import json, re, statistics, sys
peak, steps, prof, profstep = {}, {}, {}, {}
for line in open(sys.argv[1]):
    lib, t, kind, js = line.split(" ", 3)
    if kind == "prof":  # a profile line: "name N calls X ms P%", or the header
        entries = prof.setdefault((lib, int(t)), {})
        e = re.match(r"\s+(\w+)\s+\d+ calls\s+([0-9.]+) ms", js)
        h = re.search(r"([0-9.]+) ms of timed work", js)
        if e:
            entries[e.group(1)] = float(e.group(2))
        elif h:
            entries["(all entries)"] = float(h.group(1))
        continue
    r = json.loads(js)
    if kind == "profstep":
        profstep[(lib, int(t))] = r["ms"]
    elif kind == "peak":
        peak[(lib, int(t))] = r["gflops"]
    else:
        steps.setdefault((lib, int(t)), []).append(r)
tokens = int(sys.argv[2])
out = {"bench": "cpu_scaling", "shape": sys.argv[3] + " fp32", "runs": []}
print(f"{'openblas':9} {'threads':>7} {'ms/step':>9} {'tok/s':>8} {'vs 2':>6} {'GFLOP/s':>8} {'peak':>8} {'of peak':>7}")
for lib in dict.fromkeys(k[0] for k in steps):
    base = None
    for t in sorted(k[1] for k in steps if k[0] == lib):
        rs = steps[(lib, t)]
        ms = statistics.median(r["ms"] for r in rs)
        tps = tokens / ms * 1e3
        gflops = rs[0]["flops_per_token"] * tokens / ms / 1e6
        if t == 2:
            base = tps
        frac = gflops / peak[(lib, t)] if peak.get((lib, t)) else 0.0
        vs2 = tps / base if base else float("nan")
        print(f"{lib:9} {t:7d} {ms:9.1f} {tps:8.1f} {vs2:6.2f} {gflops:8.1f} {peak.get((lib, t), 0):8.1f} {frac:7.3f}")
        out["runs"].append({"openblas": lib, "threads": t, "ms": ms, "tokens_per_s": round(tps, 1),
                            "over_2_threads": round(vs2, 3) if base else None, "gflops": round(gflops, 1),
                            "fma_peak_gflops": peak.get((lib, t)), "of_peak": round(frac, 3),
                            "gemm": rs[0]["gemm"]})
def print_profile(lib, per_step):
    counts = sorted(t for (l, t) in prof if l == lib)
    if not counts:
        return
    lo, hi = counts[0], counts[-1]
    table = {t: {k: v / per_step for k, v in prof[(lib, t)].items()} for t in counts}
    for t in counts:  # the step's time outside the kernel tables: the profiled run's median step less its entries
        table[t]["(outside the tables)"] = max(0.0, profstep[(lib, t)] - table[t]["(all entries)"])
    names = sorted(table[hi], key=lambda k: -table[hi][k])
    print(f"{lib} OpenBLAS, ms per step by kernel-table entry (ZT_CPU_PROFILE=1), speed-up {hi} over {lo} threads "
          f"(ideal {hi / lo:.1f}):")
    print(f"  {'entry':24}" + "".join(f"{t:>9}" for t in counts) + f"{'speed-up':>10}")
    for k in names:
        row = [table[t].get(k, 0.0) for t in counts]
        up = row[0] / row[-1] if row[-1] > 0 else float("nan")
        print(f"  {k:24}" + "".join(f"{v:9.1f}" for v in row) + f"{up:10.2f}")
        out.setdefault("profile", {}).setdefault(lib, {})[k] = {str(t): round(v, 2) for t, v in zip(counts, row)}

for lib in dict.fromkeys(k[0] for k in prof):
    print_profile(lib, int(sys.argv[4]))
print(json.dumps(out))
PY
