#!/usr/bin/env bash
# zerotrain's training step on the GPU against PyTorch eager on the same card (issue 28's
# speed bar): GPT-2 124M (preset gpt2, vocabulary padded to 50304), or with MODEL=llama
# SmolLM-135M's Llama shape (preset SmolLM-135M, vocabulary 49152), bf16 with fp32 master
# weights, T=1024, random tokens (the byte tokenizer: only the vocabulary size matters), AdamW and gradient clipping included. zerotrain's
# tokens/s is the median of its metrics.csv after STEPS_WARM warm-up steps; PyTorch's is
# bench/cuda/torch_gpt2_cuda.py's median. Prints one line per run and a JSON line.
# COMPILE=1 adds torch.compile (its compilation takes a minute or more), at the batch sizes in
# COMPILE_BATCHES (default: all); TORCH=0 runs zerotrain alone (for its profile); PREDICT=1
# adds the planner's tokens/s from this GPU's kernel table (zerotrain calibrate --device cuda
# --quick at the run's shape, then estimate), planner_tokens_per_s in the JSON.
# usage: ZEROTRAIN=path BATCHES="16 64" STEPS=20 [COMPILE=1] [MODEL=llama] bash bench/cuda/gpu_train_step.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ZT=${ZEROTRAIN:-$ROOT/build/zerotrain}
STEPS=${STEPS:-20}
WARM=${STEPS_WARM:-5}
if [ "${MODEL:-gpt2}" = llama ]; then
  VOCAB=49152 MODEL_JSON='"preset": "SmolLM-135M"' TORCH_ARGS=--llama
else
  VOCAB=50257 MODEL_JSON='"preset": "gpt2", "vocab_size": 50257, "padded_vocab_size": 50304' TORCH_ARGS=
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/train.bin" "$VOCAB" <<'PY'
import struct, sys, random
random.seed(0)
n, vocab = 64 * 1024 * 30, int(sys.argv[2])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
    f.write(struct.pack("<%dH" % n, *(random.randrange(vocab) for _ in range(n))))
PY
summary="{"
for B in ${BATCHES:-16}; do
  cat > "$WORK/cfg.json" <<JSON
{"train_batch_size": $B, "train_micro_batch_size_per_gpu": $B, "gradient_accumulation_steps": 1,
 "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": 0.1}}, "gradient_clipping": 1.0,
 "bf16": {"enabled": true}, "model": {$MODEL_JSON},
 "data": {"train": "$WORK/train.bin", "tokenizer": "byte", "seq_len": 1024},
 "training": {"steps": $STEPS, "eval_interval": 0, "output_dir": "$WORK/out$B", "save_at_end": false, "device": "cuda"}}
JSON
  "$ZT" train --config "$WORK/cfg.json" > "$WORK/zt$B.log" 2>&1
  rc=$?
  grep -E "^backend|^model" "$WORK/zt$B.log" | head -2
  zt=$(python3 - "$WORK/out$B/metrics.csv" "$WARM" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))][int(sys.argv[2]):]
print(round(statistics.median(float(r["tokens_per_s"]) for r in rows)))
PY
)
  [ $rc -ne 0 ] && { tail -5 "$WORK/zt$B.log"; zt=0; }
  grep -A48 "CUDA table profile" "$WORK/zt$B.log" || true  # with ZT_CUDA_PROFILE=1
  pred=0  # PREDICT=1: the planner's step from this GPU's kernel table (calibrate --device cuda), beside the run
  if [ "${PREDICT:-0}" = 1 ]; then
    "$ZT" calibrate --device cuda --precision bf16 --quick --skip-comm --config "$WORK/cfg.json" --micro-batches "$B" \
      --tp 1 -o "$WORK/gpu_cal.json" > "$WORK/cal$B.log" 2>&1 || tail -3 "$WORK/cal$B.log"
    "$ZT" estimate --config "$WORK/cfg.json" --calibration "$WORK/gpu_cal.json" > "$WORK/est$B.log" 2>&1
    grep -E "^(predicted|step time|  assumes compute)" "$WORK/est$B.log"
    pred=$("$ZT" estimate --config "$WORK/cfg.json" --calibration "$WORK/gpu_cal.json" --json 2>/dev/null |
      python3 -c "import json, sys; j = json.load(sys.stdin); print(round($B * 1024 / j['step_s']) if j.get('step_s') else 0)" 2>/dev/null || echo 0)
  fi
  eager='{"tokens_per_s": 0}'
  [ "${TORCH:-1}" = 1 ] && eager=$(python3 "$ROOT/bench/cuda/torch_gpt2_cuda.py" $TORCH_ARGS --batch "$B" --steps "$STEPS" | tail -1)
  te=$(echo "$eager" | python3 -c "import json,sys; print(json.load(sys.stdin)['tokens_per_s'])" 2>/dev/null || echo 0)
  tc=0
  if [ "${COMPILE:-0}" = 1 ] && [[ " ${COMPILE_BATCHES:-$B} " == *" $B "* ]]; then
    compiled=$(python3 "$ROOT/bench/cuda/torch_gpt2_cuda.py" $TORCH_ARGS --batch "$B" --steps "$STEPS" --compile | tail -1)
    tc=$(echo "$compiled" | python3 -c "import json,sys; print(json.load(sys.stdin)['tokens_per_s'])" 2>/dev/null || echo 0)
  fi
  echo "B=$B: zerotrain $zt tokens/s; PyTorch eager $te tokens/s ($eager); torch.compile $tc tokens/s; planner predicted $pred tokens/s"
  summary="$summary\"B$B\": {\"zerotrain_tokens_per_s\": $zt, \"torch_eager_tokens_per_s\": $te, \"torch_compile_tokens_per_s\": $tc, \"planner_tokens_per_s\": $pred}, "
done
echo "${summary%, }}"
