// The routed experts of an MoE block on the compact layout (kernels/moe_ops.h: expert e's
// rows contiguous, experts in order, nothing padded), here or, with expert parallelism, on
// their owners. Expert parallelism (issue 30) spreads the experts over the ranks of an
// expert-parallel group of size ep, each rank holding E/ep of them (nn/gpt_layout.h), and
// carries the tokens to them and back by all-to-all (DeepSpeed's MOELayer: dispatch,
// all-to-all, experts, all-to-all, combine).
//
// Layout. Every rank routes and dispatches its own tokens as without ep, into its compact
// buffer; peer q's experts [q E/ep, (q + 1) E/ep) are one contiguous block of it, which is
// q's segment of the exchange (only kept rows travel). A small first all-to-all tells each
// owner the sender's filled rows per expert. The owner receives segments in peer order, peer
// p's at row `row[p]`, each compact over the owner's experts, and runs each expert once per
// peer on the same rows with the same shapes as the single process: results are
// bit-identical, and an expert's weight gradient adds the peers' contributions in peer
// order. Outputs return by the reverse all-to-all into the sender's compact buffer, where
// combine reads them. Backward mirrors it.
// Every rank of the group must run the same blocks in the same order (the schedule is
// the same on every data-parallel rank of a stage).
// Thread-safety: one training thread per rank.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "kernels/moe_ops.h"

namespace zt {

// What one block's exchange received, kept from forward to backward.
struct MoeExchange {
  std::vector<std::vector<int64_t>> fill;  // per peer, per local expert: rows received
  std::vector<int64_t> row;                // per peer: its segment's first row here
  int64_t rows = 0;                        // rows received in all
};

// This rank's experts of one block and (ep > 1) the group they are spread over.
struct MoeLocalExperts {
  const MoeOps* ops = nullptr;
  ProcessGroup* ep = nullptr;
  int local = 0;  // E / ep
  int C = 0, I = 0;
  bool swiglu = false;
  std::vector<MoeExpertWeights> weights;  // the local experts'
  std::vector<MoeExpertGrads> grads;      // backward only
  // 16-bit compute: expert j's weights widened to fp32 on demand (valid until the next
  // call); empty: weights[j]. Each expert is asked for once per forward and backward.
  std::function<MoeExpertWeights(int j)> widen;
  MoeExpertWeights weights_of(int j) const { return widen ? widen(j) : weights[static_cast<size_t>(j)]; }
};

// The experts on a compact buffer whose expert j has fill[j] rows from row offset[j]
// (every array indexed by rows: buf, out, dbuf, dout (C wide), the acts (I wide)).
void moe_local_experts_forward(const MoeLocalExperts& x, float* out, const MoeExpertActs& acts, const float* buf,
                               const std::vector<int64_t>& fill, const std::vector<int64_t>& offset);
void moe_local_experts_backward(const MoeLocalExperts& x, float* dbuf, const float* dout, const MoeExpertActs& acts,
                                const float* buf, const std::vector<int64_t>& fill, const std::vector<int64_t>& offset,
                                float* scratch);

// Forward with ep > 1. send: this rank's dispatched compact buffer, laid out by `layout`
// (E experts). recv and acts receive the peers' rows and the experts' saved activations
// (kept for backward), eout is scratch for the experts' outputs, and the outputs come back
// into out (laid out as send).
StatusOr<MoeExchange> moe_ep_forward(const MoeLocalExperts& x, const float* send, const MoeCompact& layout,
                                     float* recv, const MoeExpertActs& acts, float* eout, float* out);

// Backward with ep > 1. dout: the outputs' gradient (laid out by `layout`); on return it
// holds the dispatched rows' gradient in the same layout (what dispatch_backward reads).
// drecv and dbuf are scratch of at least ex.rows rows.
Status moe_ep_backward(const MoeLocalExperts& x, const MoeExchange& ex, const MoeCompact& layout, float* dout,
                       float* drecv, float* dbuf, const MoeExpertActs& acts, const float* recv, float* scratch);

}  // namespace zt
