// Fused softmax cross-entropy with ignore-index -1 over a possibly padded vocabulary.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_table.h"

namespace zt {

constexpr int32_t kIgnoreIndex = -1;

// logits: (N, Vp), of which columns [0, V) are classes; targets: (N) in [0, V) or -1.
// losses[r] = logsumexp(logits[r, :V]) - logits[r, target] (0 for ignored rows);
// stats (N, 2) = [max, log(sum(exp(logits - max)))] per row, saved for the backward.
inline void crossentropy_forward(float* losses, float* stats, const float* logits, const int32_t* targets,
                                 int64_t N, int V, int Vp) {
  cpu_kernels().crossentropy_forward(losses, stats, logits, targets, N, V, Vp);
}

// dlogits[r, j] = (softmax_j - [j == target]) * dloss for j < V, 0 for padding columns and
// ignored rows. dloss is dL/dloss_r, the same for every row (1 / number of counted
// tokens for a mean). dlogits may alias logits (the usual, in-place case).
inline void crossentropy_backward(float* dlogits, const float* logits, const float* stats, const int32_t* targets,
                                  float dloss, int64_t N, int V, int Vp) {
  cpu_kernels().crossentropy_backward(dlogits, logits, stats, targets, dloss, N, V, Vp);
}

}  // namespace zt
