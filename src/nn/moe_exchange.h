// Expert parallelism (issue 30): an MoE block's routed experts spread over the ranks of an
// expert-parallel group of size ep, each rank holding E/ep of them (nn/gpt_layout.h), and
// the tokens carried to them and back by all-to-all (DeepSpeed's MOELayer: dispatch,
// all-to-all, experts, all-to-all, combine).
//
// Layout. Every rank routes and dispatches its own tokens as without ep, into its
// (E, cap, C) buffer; peer q's experts are the contiguous rows of experts
// [q E/ep, (q + 1) E/ep), so that block is q's segment of the exchange. A small first
// all-to-all tells each owner the sender's capacity and its filled rows per expert
// (capacities differ between ranks when tokens are not dropped). The owner receives
// segments in peer order, peer p's at row `row[p]` = sum over q < p of (E/ep) cap_q, and
// runs its experts once per peer segment, on the same rows with the same shapes as the
// single process would: results are bit-identical, and an expert's weight gradient adds
// the peers' contributions in peer order. Outputs return by the reverse all-to-all into
// the sender's (E, cap, C) layout, where combine reads them.
//
// Backward mirrors it: the outputs' gradients go to the owners, the experts' backward runs
// per peer segment (weight gradients +=), and the inputs' gradients return.
// Every rank of the group must run the same blocks in the same order (the schedule is
// the same on every data-parallel rank of a stage).
// Thread-safety: one training thread per rank.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "kernels/moe_ops.h"

namespace zt {

// What one block's exchange received, kept from forward to backward.
struct MoeExchange {
  std::vector<int64_t> capacity;           // per peer: rows per expert in its segment
  std::vector<std::vector<int64_t>> fill;  // per peer, per local expert: filled rows
  std::vector<int64_t> row;                // per peer: its segment's first row here
  int64_t rows = 0;                        // rows received in all
};

// This rank's experts of one block and the group they are spread over.
struct MoeLocalExperts {
  const MoeOps* ops = nullptr;
  ProcessGroup* ep = nullptr;
  int local = 0;  // E / ep
  int C = 0, I = 0;
  bool swiglu = false;
  std::vector<MoeExpertWeights> weights;  // the local experts'
  std::vector<MoeExpertGrads> grads;      // backward only
};

// Forward. send: this rank's dispatched rows (E, cap, C) with `fill` (E) filled rows per
// expert. recv and acts receive the peers' rows and the experts' saved activations (kept
// for backward), eout is scratch for the experts' outputs (all at least E x bound rows),
// and the outputs come back into out (E, cap, C).
StatusOr<MoeExchange> moe_ep_forward(const MoeLocalExperts& x, const float* send, int64_t cap,
                                     const std::vector<int64_t>& fill, float* recv, const MoeExpertActs& acts,
                                     float* eout, float* out);

// Backward. dout: the outputs' gradient (E, cap, C); on return it holds the dispatched
// rows' gradient in the same layout (what dispatch_backward reads). drecv and dbuf are
// scratch of at least ex.rows rows, scratch the experts' backward scratch for the widest
// segment.
Status moe_ep_backward(const MoeLocalExperts& x, const MoeExchange& ex, int64_t cap, float* dout, float* drecv,
                       float* dbuf, const MoeExpertActs& acts, const float* recv, float* scratch);

}  // namespace zt
