#!/usr/bin/env bash
# Benchmark (issue 13, acceptance 5): mixed precision. GPT-2 small (12 x 768, vocab 50257)
# at B=4 T=64 and B=8 T=128: zerotrain's AdamW training step in fp32, bf16 and fp16
# (16-bit compute, fp32 master weights) and PyTorch's in fp32 and with CPU autocast bf16
# (fp32 weights, bf16 matmuls), alternating in one run at the same thread count. Prints
# per shape and precision the median ms/step, tokens/s, activation bytes and peak RSS,
# the GEMM kernel oneDNN picked for bf16 (AMX or AVX-512 BF16 or the fp32 fallback), and
# the last line is one JSON object:
#   bf16_over_fp32         zerotrain bf16 step time / fp32 step time (worst shape)
#   speedup_vs_torch_bf16  PyTorch autocast-bf16 step time / zerotrain bf16 (worst shape)
#   bf16_activation_ratio  zerotrain activation bytes, bf16 / fp32 (GPT-2 small, B=8 T=128)
#   amx                    whether oneDNN ran the bf16 GEMMs on AMX tiles
#   ROUNDS=3 STEPS=3 THREADS=2 bench/precision.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-3}"
THREADS="${THREADS:-2}"
zt_build train_step_bench
export OMP_NUM_THREADS="$THREADS"

SHAPES=(
  "gpt2_b4t64 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 4 --seq 64"
  "gpt2_b8t128 --layers 12 --heads 12 --embd 768 --vocab 50257 --batch 8 --seq 128"
)
log=$(mktemp)
ms() { echo "$1" | sed 's/.*"ms": *\([0-9.]*\).*/\1/'; }
echo "machine: $(zt_machine)"
for round in $(seq "$ROUNDS"); do
  for entry in "${SHAPES[@]}"; do
    name=${entry%% *}
    args=${entry#* }
    line="round $round $name:"
    for p in fp32 bf16 fp16; do
      z=$("$ZT_BENCH_BUILD/train_step_bench" $args --precision "$p" --steps "$STEPS" --warmup 1 --threads "$THREADS")
      echo "$name $z" >>"$log"
      line="$line zt-$p $(ms "$z") ms,"
    done
    for p in none bf16; do
      t=$("$ZT_PYTHON" "$ZT_ROOT/bench/torch_train_step.py" $args --autocast "$p" --steps "$STEPS" --warmup 1 \
          --threads "$THREADS")
      echo "$name $t" >>"$log"
      line="$line torch-$p $(ms "$t") ms,"
    done
    echo "$line" >&2
  done
done
"$ZT_PYTHON" - "$log" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    r = json.loads(js)
    rows.setdefault(name, {}).setdefault((r["impl"], r["precision"]), []).append(r)
med = lambda rs, k: statistics.median(r[k] for r in rs)
first = next(iter(rows.values()))
bf = first[("zerotrain", "bf16")][0]
print(f"bf16 GEMM kernel (oneDNN): {bf['bf16_gemm']}")
for p in ("fp32", "bf16", "fp16"):
    print(f"zerotrain {p}: {first[('zerotrain', p)][0]['backend']}")
print(f"pytorch {first[('pytorch', 'fp32')][0]['version']}")
print(f"{'shape':12} {'impl':21} {'ms/step':>9} {'tok/s':>8} {'runs (ms)':>15} {'activ. MiB':>11} {'peak RSS MiB':>13}")
tokens = {"gpt2_b4t64": 4 * 64, "gpt2_b8t128": 8 * 128}
out = {"bench": "precision"}
over, vs_torch = [], []
for name, by in rows.items():
    for key in (("zerotrain", "fp32"), ("zerotrain", "bf16"), ("zerotrain", "fp16"), ("pytorch", "fp32"),
                ("pytorch", "bf16")):
        rs = by[key]
        m = med(rs, "ms")
        act = f"{med(rs, 'activation_mb'):11.1f}" if key[0] == "zerotrain" else f"{'-':>11}"
        runs = f"{min(r['ms'] for r in rs):.0f}-{max(r['ms'] for r in rs):.0f}"
        label = key[0] + " " + (key[1] if key[0] == "zerotrain" else ("autocast bf16" if key[1] == "bf16" else "fp32"))
        print(f"{name:12} {label:21} {m:9.1f} {tokens[name] / (m / 1e3):8.1f} {runs:>15} {act} {med(rs, 'peak_rss_mb'):13.1f}")
    z32, z16 = med(by[("zerotrain", "fp32")], "ms"), med(by[("zerotrain", "bf16")], "ms")
    t16 = med(by[("pytorch", "bf16")], "ms")
    over.append(z16 / z32)
    vs_torch.append(t16 / z16)
    print(f"{name:12} bf16/fp32 {z16 / z32:.3f}, fp16/fp32 {med(by[('zerotrain', 'fp16')], 'ms') / z32:.3f}, "
          f"speed-up vs torch autocast bf16 {t16 / z16:.2f}x, vs torch fp32 {med(by[('pytorch', 'fp32')], 'ms') / z16:.2f}x")
    out[f"bf16_over_fp32_{name}"] = round(z16 / z32, 3)
    out[f"speedup_vs_torch_bf16_{name}"] = round(t16 / z16, 3)
big = rows["gpt2_b8t128"]
out["bf16_over_fp32"] = round(max(over), 3)
out["speedup_vs_torch_bf16"] = round(min(vs_torch), 3)
out["bf16_activation_ratio"] = round(med(big[("zerotrain", "bf16")], "activation_mb") /
                                     med(big[("zerotrain", "fp32")], "activation_mb"), 4)
out["amx"] = "amx" in bf["bf16_gemm"]
out["bf16_gemm"] = bf["bf16_gemm"]
print(json.dumps(out))
PY
rm -f "$log"
