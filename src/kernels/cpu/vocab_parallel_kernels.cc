// Vocabulary-parallel embedding and cross-entropy, local parts (ISA kernels for the row
// reductions come from the KernelTable).
#include "kernels/cpu/vocab_parallel_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {
int valid_classes(const VocabSlice& v) { return std::clamp(v.V - v.vstart, 0, v.Vl); }
}  // namespace

void vocab_embedding_rows(float* out, const int32_t* tokens, const float* wte_l, int64_t rows, int C,
                          const VocabSlice& v) {
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    float* o = out + bt * C;
    const int32_t local = tokens[bt] - v.vstart;
    if (local >= 0 && local < v.Vl) {
      std::memcpy(o, wte_l + static_cast<int64_t>(local) * C, sizeof(float) * static_cast<size_t>(C));
    } else {
      std::memset(o, 0, sizeof(float) * static_cast<size_t>(C));
    }
  }
}

void embedding_finish(float* out, const float* summed, const float* wpe, int64_t rows, int T, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    const float* s = summed + bt * C;
    float* o = out + bt * C;
    if (wpe == nullptr) {  // no position table (Llama)
      for (int c = 0; c < C; ++c) o[c] = s[c];
      continue;
    }
    const float* p = wpe + static_cast<int64_t>(bt % T) * C;
    for (int c = 0; c < C; ++c) o[c] = s[c] + p[c];
  }
}

void vocab_embedding_backward(float* dwte_l, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C,
                              const VocabSlice& v) {
  constexpr int kBlock = 64;  // column blocks, rows in order: deterministic
  const int nblocks = (C + kBlock - 1) / kBlock;
  const int64_t rows = static_cast<int64_t>(B) * T;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kBlock, c1 = std::min(C, c0 + kBlock);
    for (int64_t bt = 0; bt < rows; ++bt) {
      const float* d = dout + bt * C;
      if (dwpe != nullptr) {
        float* p = dwpe + static_cast<int64_t>(bt % T) * C;
        for (int c = c0; c < c1; ++c) p[c] += d[c];
      }
      const int32_t local = tokens[bt] - v.vstart;
      if (local < 0 || local >= v.Vl) continue;
      float* e = dwte_l + static_cast<int64_t>(local) * C;
      for (int c = c0; c < c1; ++c) e[c] += d[c];
    }
  }
}

void vocab_xent_row_max(float* row_max, const float* logits_l, int64_t N, const VocabSlice& v) {
  const KernelTable& k = cpu_kernels();
  const int valid = valid_classes(v);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) row_max[i] = k.row_max(logits_l + i * v.Vl, valid);
}

void vocab_xent_partials(float* stats, float* row_sums, const float* row_max_all, int P, const float* logits_l,
                         const int32_t* targets, int64_t N, const VocabSlice& v) {
  const KernelTable& k = cpu_kernels();
  const int valid = valid_classes(v);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float m = row_max_all[i];
    for (int p = 1; p < P; ++p) m = std::max(m, row_max_all[static_cast<int64_t>(p) * N + i]);
    const float* row = logits_l + i * v.Vl;
    stats[2 * i] = m;
    row_sums[2 * i] = k.row_sum_exp(row, valid, m);
    const int32_t local = targets[i] - v.vstart;
    row_sums[2 * i + 1] = (targets[i] >= 0 && local >= 0 && local < valid) ? row[local] : 0.0f;
  }
}

void vocab_xent_finish(float* losses, float* stats, const float* row_sums, const int32_t* targets, int64_t N) {
  for (int64_t i = 0; i < N; ++i) {
    const float logsum = static_cast<float>(std::log(static_cast<double>(row_sums[2 * i])));
    stats[2 * i + 1] = logsum;
    losses[i] = targets[i] < 0 ? 0.0f : (stats[2 * i] - row_sums[2 * i + 1]) + logsum;
  }
}

void vocab_xent_backward(float* dlogits_l, const float* logits_l, const float* stats, const int32_t* targets,
                         float dloss, int64_t N, const VocabSlice& v) {
  const KernelTable& k = cpu_kernels();
  const int valid = valid_classes(v);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float* d = dlogits_l + i * v.Vl;
    if (targets[i] < 0) {
      std::memset(d, 0, sizeof(float) * static_cast<size_t>(v.Vl));
      continue;
    }
    k.row_softmax_scaled(d, logits_l + i * v.Vl, valid, stats[2 * i], stats[2 * i + 1], dloss);
    for (int j = valid; j < v.Vl; ++j) d[j] = 0.0f;
    const int32_t local = targets[i] - v.vstart;
    if (local >= 0 && local < valid) d[local] -= dloss;
  }
}

}  // namespace zt
