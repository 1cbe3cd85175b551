#!/usr/bin/env bash
# Issue 29's capacity and speed runs on the GPU machine (offload_bench, packed by
# pack_device.sh), about 4 minutes; device_check.sh runs it with OFFLOAD=1, or run it alone
# after device_check.sh has unpacked .device (same LD_LIBRARY_PATH):
#   1. capacity: Llama-2-7B (6.74 B), bf16, micro-batch 1 x 2048, every block checkpointed,
#      offload_optimizer "cpu": 3 steps with the loss falling; device and host memory beside
#      estimate's, peak RSS, seconds per step split into forward, backward, the host's
#      update and the time blocked on copies; TFLOP/s. Then the same model held entirely on
#      the GPU (offload none), 2 steps: whether it fits (its error names the bytes if not).
#   2. speed: GPT-2 1.5B (gpt2-xl), bf16, micro-batch 8 x 1024, gradient accumulation 8,
#      every block checkpointed: on the GPU, with offload_optimizer "cpu" (bar: at least 0.7
#      of the tokens/s), and with cpu_checkpointing (bar: at most 1.10 x the time).
# Each run prints its lines and one JSON line; the last line is a JSON summary.
# usage: bash bench/cuda/offload_check.sh   (OFFLOAD_BENCH: the binary, default .device/bin/offload_bench)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=${OFFLOAD_BENCH:-$ROOT/.device/bin/offload_bench}
ZT=${ZEROTRAIN:-$(dirname "$BENCH")/zerotrain}
LOGS=${LOGS:-/tmp/zt_device_out}
W=$(mktemp -d)
mkdir -p "$LOGS"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}

# config NAME MODEL MICRO SEQ ACCUM CHECKPOINTS ZERO_EXTRA ACTIVATION_EXTRA
config() {
  cat > "$W/$1.json" <<EOF
{"train_micro_batch_size_per_gpu": $3, "gradient_accumulation_steps": $5, "bf16": {"enabled": true},
 "optimizer": {"type": "AdamW", "params": {"lr": 0.0003}},
 "zero_optimization": {"stage": 0 $7},
 "activation_checkpointing": {"number_checkpoints": $6 $8},
 "training": {"device": "cuda"}, "model": {"preset": "$2"}, "data": {"seq_len": $4}}
EOF
}
run() {  # NAME STEPS
  printf '\n--- %s\n' "$1"
  "$BENCH" --config "$W/$1.json" --steps "$2" > "$LOGS/offload_$1.log" 2>&1
  echo "exit $?" >> "$LOGS/offload_$1.log"
  cat "$LOGS/offload_$1.log"
}
OPT=', "offload_optimizer": {"device": "cpu"}'
config llama7b_offload Llama-2-7B 1 2048 1 32 "$OPT" ""
config llama7b_gpu Llama-2-7B 1 2048 1 32 "" ""
config xl_gpu gpt2-xl 8 1024 8 48 "" ""
config xl_offload gpt2-xl 8 1024 8 48 "$OPT" ""
config xl_cpu_checkpointing gpt2-xl 8 1024 8 48 "" ', "cpu_checkpointing": true'
run llama7b_offload 3
run llama7b_gpu 2
for r in xl_gpu xl_offload xl_cpu_checkpointing; do run $r 3; done
# estimate's offload terms against the runs above: calibrate --skip-compute measures the pinned
# rates (and no kernels), so estimate prices the PCIe part and says the host update is not.
printf '\n--- estimate: offload terms from the pinned rates measured here\n'
"$ZT" calibrate --skip-compute -o "$W/cal.json" > "$LOGS/offload_calibrate.log" 2>&1
grep -E "^device link" "$LOGS/offload_calibrate.log"
for r in llama7b_offload xl_offload; do
  "$ZT" estimate --config "$W/$r.json" --calibration "$W/cal.json" 2>&1 | grep -E "^(offload|on the device)" | sed "s/^/$r: /"
done
python3 - "$LOGS" <<'PY'
import json, sys
def last(name):
    try:
        lines = [l for l in open(f"{sys.argv[1]}/offload_{name}.log") if l.startswith("{")]
        return json.loads(lines[-1]) if lines else {}
    except OSError:
        return {}
r = {n: last(n) for n in ("llama7b_offload", "llama7b_gpu", "xl_gpu", "xl_offload", "xl_cpu_checkpointing")}
gpu, off, act = (r[n].get("step_s") for n in ("xl_gpu", "xl_offload", "xl_cpu_checkpointing"))
print(json.dumps({"offload_check": r, "xl_offload_tokens_ratio": round(gpu / off, 3) if gpu and off else None,
                  "xl_activation_offload_time_ratio": round(act / gpu, 3) if gpu and act else None}))
PY
rm -rf "$W"
