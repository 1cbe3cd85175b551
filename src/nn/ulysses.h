// DeepSpeed-Ulysses' exchange (issue 31): one activation moved between the two layouts of
// sequence parallelism by one all-to-all over the sequence-parallel group (size P).
//
// Sequence-sharded (every layer but attention): (B, Tl, W*C), this rank's Tl tokens of
// each sequence (positions [rank Tl, (rank + 1) Tl)), every head; the row holds W column
// groups of C (q, k, v: W = 3; an attention output: W = 1), head h at [h hs, (h+1) hs) of
// each group.
// Head-sharded (attention): (B, T, W*Cs) with T = Tl P and Cs = C / P: every token of the
// sequence in position order, the columns of this rank's heads [rank NH/P, (rank+1) NH/P)
// of each group, side by side: the fused (B, T, 3C') layout the attention kernels read.
// Rank r sends peer q its tokens' columns of q's heads; the exchange is a permutation, so
// it changes no value. Both layouts hold B Tl W C elements; `in` is read before `out` is
// written, so they may be one buffer. send and recv are scratch of that size. Collective over the group, in the same order on
// every rank. Host-memory backends only (the copies are backend copies of Cs-wide rows).
// Thread-safety: one training thread per rank.
#pragma once

#include "backend/backend.h"
#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

struct UlyssesShape {
  int B = 1;
  int Tl = 1;  // this rank's tokens of each sequence
  int W = 1;   // column groups per row
  int C = 1;   // width of one group, divisible by the group's size
};

// The two scratch buffers and the element size of an exchange.
struct UlyssesScratch {
  void* send;
  void* recv;
  size_t elem_bytes;
};

// Sequence-sharded `in` -> head-sharded `out`.
Status ulysses_to_heads(ProcessGroup& sp, const Backend& backend, const void* in, void* out, const UlyssesScratch& b,
                        const UlyssesShape& s);
// Head-sharded `in` -> sequence-sharded `out`.
Status ulysses_to_sequence(ProcessGroup& sp, const Backend& backend, const void* in, void* out,
                           const UlyssesScratch& b, const UlyssesShape& s);

}  // namespace zt
