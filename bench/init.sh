#!/usr/bin/env bash
# Benchmark: parameter initialisation (nn/param_init.h) of GPT-2 small and GPT-2 XL, in host
# memory and through host chunks into memory the host may not write (a GPU's path, with
# memcpy for its copies), against PyTorch filling as many parameters with
# normal_(0, 0.02) on the same threads (its generator is another, vectorised one: the
# reference for what drawing a normal per parameter costs). Prints one JSON line per model
# and a summary; the last line is one JSON object.
#   THREADS=2 REPS=3 bench/init.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
THREADS="${THREADS:-2}"
REPS="${REPS:-3}"
zt_build init_bench
echo "machine: $(zt_machine)"
MODELS=(
  "gpt2_small --layers 12 --heads 12 --embd 768 --vocab 50257"
  "gpt2_xl --layers 48 --heads 25 --embd 1600 --vocab 50257"
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for m in "${MODELS[@]}"; do
  name=${m%% *}
  out=$(OMP_NUM_THREADS=$THREADS "$ZT_BENCH_BUILD/init_bench" ${m#* } --threads "$THREADS" --reps "$REPS")
  echo "$out"
  n=$(echo "$out" | "$ZT_PYTHON" -c 'import json,sys; print(int(json.load(sys.stdin)["params"]))')
  torch_s=$("$ZT_PYTHON" - "$n" "$THREADS" "$REPS" <<'PY'
import statistics, sys, time, torch
n, threads, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
t = torch.empty(n)
times = []
for _ in range(reps):
    s = time.perf_counter(); t.normal_(0.0, 0.02); times.append(time.perf_counter() - s)
print(statistics.median(times))
PY
)
  echo "$name $out $torch_s" >>"$log"
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, sys
res = {"bench": "init_summary", "models": {}}
for line in open(sys.argv[1]):
    name, js, torch_s = line.split(" ", 1)[0], line.split(" ", 1)[1].rsplit(" ", 1)[0], float(line.rsplit(" ", 1)[1])
    d = json.loads(js)
    print(f"{name}: {d['params'] / 1e6:.0f} M parameters: host {d['host_s']:.2f} s, chunked {d['chunked_s']:.2f} s, "
          f"torch normal_ {torch_s:.2f} s (host / torch {d['host_s'] / torch_s:.1f})")
    res["models"][name] = {"params": d["params"], "host_s": d["host_s"], "chunked_s": d["chunked_s"],
                           "torch_normal_s": round(torch_s, 3), "host_over_torch": round(d["host_s"] / torch_s, 2)}
print(json.dumps(res))
PY
