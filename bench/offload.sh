#!/usr/bin/env bash
# Benchmark (issue 14, acceptance 3): NVMe offload of the optimizer state.
#  1. The disk: fio's sequential O_DIRECT write, read and 50/50 mixed bandwidth (1 MiB
#     blocks, io_uring, queue depth 8 as the aio default, and 32; the faster of the two
#     counts) on the swap directory's file system.
#  2. GPT-2 small (12 x 768, vocab 50257; micro-batch 4 x 64 tokens, fp32, one process):
#     zerotrain train in memory and with offload_optimizer.device "nvme", alternating,
#     at gradient accumulation 1 and 16: median step time, the optimizer pass's disk
#     traffic and the bandwidth the swapper reached against fio's, and peak RSS.
#     Before the runs, zerotrain calibrate measures their kernels and the swap directory
#     (as a user would before planning), and each run's row shows estimate's predicted step
#     and optimizer times with their relative errors (planner/swap_model.h).
#  3. The headline: gpt2-xl (48 x 1600, 1.56 B parameters, 25 GB of fp32 model states)
#     for 3 steps with the optimizer state on disk, fp32, micro-batch 1 x 128 tokens, lr 2e-6 (no warmup:
#     larger rates overshoot by step 3 on gpt2-large in memory too; see RESULTS.md):
#     time per step, bytes moved, losses and peak RSS.
# The last line is one JSON object:
#   io_fraction                    t_fio / the optimizer pass's time, where t_fio is fio's
#                                  time for the same bytes: the faster of read/fio_read +
#                                  written/fio_write and (read + written)/fio's 50/50
#                                  mixed rate; median over the offloaded steps
#   offload_over_inmemory_accum16  offloaded / in-memory step time at accumulation 16
#   offload_over_inmemory_accum1   the same at accumulation 1
#   predicted_step_rel_error       per run: estimate's step / the measured median - 1
#   predicted_optimizer_rel_error  the same for the optimizer pass
#   largest_params, largest_peak_rss_gb (GiB), largest_step_s, largest_losses
#   ROUNDS=2 THREADS=2 SWAP_DIR=out/offload-bench bench/offload.sh
# SKIP_XL=1 leaves out step 3 (it needs ~14 GiB of memory and ~30 GB of disk).
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${ROUNDS:-2}"
THREADS="${THREADS:-2}"
SWAP_DIR="${SWAP_DIR:-$ZT_ROOT/out/offload-bench}"
command -v fio >/dev/null || { echo "offload.sh needs fio (apt-get install fio)" >&2; exit 1; }
zt_build zerotrain_cli
mkdir -p "$SWAP_DIR"
echo "machine: $(zt_machine)"
echo "swap directory: $SWAP_DIR ($(df -h "$SWAP_DIR" | awk 'NR==2{print $1", "$4" free"}'))"
exec "$ZT_PYTHON" "$ZT_ROOT/bench/offload_bench.py" --zerotrain "$ZT_BENCH_BUILD/zerotrain" --dir "$SWAP_DIR" \
  --rounds "$ROUNDS" --threads "$THREADS" ${SKIP_XL:+--skip-xl}
