// The CPU mixed-precision activation tables (ActivationOps<half_t>, kernels/activation_ops.h):
// one for bf16 storage, one for f16 storage. Every kernel widens its 16-bit inputs to
// fp32 (exact), runs the existing fp32 kernel (cpu_kernels(), attention, encoder, linear)
// and rounds each 16-bit output once (nearest even, half_convert.h).
//
// Numerics: each output is exactly round(fp32 kernel on the widened inputs), computed on
// the whole tensor at once, for every op except the linear layers:
// - bf16 linear is linear_bf16.h (oneDNN bf16 GEMM, fp32 sums, one rounding): it differs
//   from the fp32 GEMM on the same bf16 inputs only by the order of the fp32 accumulation
//   (gemm_bf16.h's bound, 2 gamma_K sum|a b|), plus the output's one rounding;
// - f16 linear runs the fp32 linear on row chunks of half_chunk_rows(C + OC,
//   kHalfGemmChunkRows) rows (forward) or half_chunk_rows(OC + 2 C, kHalfGemmChunkRows)
//   rows (backward), so it equals the fp32 linear on the widened inputs applied chunk by
//   chunk (the fp32 GEMM may round differently for another M, and dweight sums chunk
//   after chunk). Its chunks are larger because each one re-reads and re-writes the fp32
//   dweight (OC, C).
// Parameter gradients (dweight, dbias, dwte, dwpe) are fp32 and accumulate (+=) in a fixed
// order: chunks run one after another, and each fp32 kernel's order does not depend on
// the thread count. LayerNorm statistics, losses and cross-entropy stats are fp32.
//
// Memory: no op widens a whole activation tensor. Row-wise ops work on chunks of
// half_chunk_rows() rows (at most 64 rows, or 1024 for the f16 linear, and about 16 MiB
// of fp32 scratch, so the LM head's 50304 columns still get 64 or 80 rows), elementwise
// ops on 2^18 elements, attention on one (batch, head) pair per thread (up to 7 T hs +
// 2 T^2 floats), and the f16 linear widens its weight (OC, C) once per call into a buffer
// of the calling thread's (half_weight_scratch). The scratch is kept per thread and reused.
// Thread-safety: the tables are immutable; the kernels may run on several threads at
// once (scratch is thread_local) and parallelise internally.
#pragma once

#include <cstdint>

#include "kernels/activation_ops.h"
#include "tensor/dtype.h"

namespace zt {

// The table for compute = kBF16 or kF16 (its `compute` field says which); kF32 aborts
// (the fp32 table is ActivationOps<float>).
const ActivationOps<half_t>& cpu_half_ops(DType compute);

// The most rows a chunk holds (row-wise ops; the f16 linear), and the fp32 scratch
// budget a chunk may fill.
constexpr int64_t kHalfChunkRows = 64;
constexpr int64_t kHalfGemmChunkRows = 1024;
// The norms' backward sums over rows, so its chunks run one after another: large ones, so
// that each is one parallel fp32 call rather than many small ones.
constexpr int64_t kHalfSumChunkRows = 1024;
constexpr int64_t kHalfScratchFloats = int64_t{1} << 22;  // 16 MiB

// The scratch of one thread's chunk in the forms whose chunks run on all threads at once
// (half_rows_independent, half_flat): this CPU's L2 per core (l2_cache_bytes()), so the
// widened chunk stays in the core's cache. Chunk sizes change no bit.
int64_t half_cache_floats();

// Rows per chunk for an op whose scratch takes floats_per_row floats per row: in
// [1, max_rows], and at most budget / floats_per_row where that is >= 1.
inline int64_t half_chunk_rows(int64_t floats_per_row, int64_t max_rows = kHalfChunkRows,
                               int64_t budget = kHalfScratchFloats) {
  const int64_t rows = floats_per_row > 0 ? budget / floats_per_row : max_rows;
  return rows < 1 ? 1 : rows > max_rows ? max_rows : rows;
}

}  // namespace zt
