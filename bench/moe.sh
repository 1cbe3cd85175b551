#!/usr/bin/env bash
# Benchmark (issue 30, acceptance 5): mixture of experts.
#  1. Tokens/s of a top-2, 8-expert Llama (Mixtral routing, experts 512 wide) against the
#     dense Llama with the same active parameters (one MLP 1024 wide: 2 x 512), both
#     4 x 256 with vocabulary 8192, B=8 T=128, fp32 AdamW steps, alternating ROUNDS times
#     at THREADS threads; medians. The MoE step also does the host routing, the dispatch
#     and combine copies, and its experts' GEMMs are 8 smaller ones.
#  2. The all-to-all against MPI_Alltoall: bench/alltoall.sh (ALLTOALL=0 skips it).
#  3. Expert parallelism (EP=0 skips it): 4 ranks x 1 thread, dp 4 with 4 x 128 tokens each,
#     a 4 x 256 Llama with 8 top-2 experts 512 wide (Mixtral routing), ZeRO-0, as ep 1 (each
#     rank holds every expert), ep 2 and ep 4: on this machine (shared memory; 4 ranks on
#     its cores) and on 2 network-namespace hosts x 2 ranks whose links are limited to
#     RATE Mbit/s (the ep 2 groups stay within a host, ep 4 crosses the link). Per layout:
#     ms/step (slowest rank), the all-to-all seconds per step and the model states per rank.
# Output: part 1 ends with one JSON object {"moe_over_dense_tokens_per_s": ..., ...}; part 2
# prints bench/alltoall.sh's, and with EP=1 (the default) the last line is part 3's
# {"bench": "moe_ep", ...}.
#   ROUNDS=5 STEPS=4 THREADS=2 EP_ROUNDS=2 RATE=400 bench/moe.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-5}"
STEPS="${STEPS:-4}"
THREADS="${THREADS:-2}"
zt_build train_step_bench
export OMP_NUM_THREADS="$THREADS"
echo "machine: $(zt_machine)"
BASE="--family llama --layers 4 --heads 4 --embd 256 --vocab 8192 --batch 8 --seq 128 --steps $STEPS --warmup 1 --threads $THREADS"
log=$(mktemp)
zt_alternate "$ROUNDS" "$log" \
  "echo dense \$('$ZT_BENCH_BUILD/train_step_bench' $BASE --intermediate 1024)" \
  "echo moe \$('$ZT_BENCH_BUILD/train_step_bench' $BASE --intermediate 1024 --experts 8 --experts-per-tok 2 --expert-intermediate 512)"
"$ZT_PYTHON" - "$log" 1024 <<'PY'
import json, statistics, sys
runs = {"dense": [], "moe": []}
info = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    j = json.loads(js)
    runs[name].append(j["ms"])
    info[name] = j
tokens = 8 * 128
med = {k: statistics.median(v) for k, v in runs.items()}
tps = {k: tokens / (m / 1e3) for k, m in med.items()}
for k in ("dense", "moe"):
    print(f"{k:5s}: median {med[k]:.1f} ms/step, {tps[k]:.0f} tokens/s, {info[k]['params']} parameters, "
          f"{info[k]['active_params']} active, activations {info[k]['activation_mb']:.1f} MiB")
print(json.dumps({"moe_over_dense_tokens_per_s": round(tps["moe"] / tps["dense"], 3),
                  "dense_ms": round(med["dense"], 1), "moe_ms": round(med["moe"], 1),
                  "moe_active_over_dense_params": round(info["moe"]["active_params"] / info["dense"]["active_params"], 4)}))
PY
if [ "${ALLTOALL:-1}" = 1 ]; then "$(dirname "$0")/alltoall.sh"; fi
if [ "${EP:-1}" = 1 ]; then "$(dirname "$0")/moe_ep.sh"; fi
