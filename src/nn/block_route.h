// BlockRoute: how one transformer block treats one micro-batch, for DeepSpeed's
// progressive layer drop (the block is skipped) and random-LTD (the block runs on a
// subset of each sequence's tokens).
//
// - skip: the block's output is its input (forward) and its input gradient is its output
//   gradient (backward); its parameters get no gradient.
// - kept > 0: the block runs on `kept` tokens of each of the B sequences, the ascending
//   positions in `positions` (B x kept, row b for sequence b): attention is causal among
//   those tokens in position order, Llama's RoPE rotates each at its own position. The
//   other tokens pass through unchanged, and so do their gradients.
// - scale != 1 (a block that runs): its attention and MLP outputs, the two branches before
//   each residual add, are multiplied by `scale` (progressive layer drop's 1 / p); their
//   gradients likewise. Not with tensor parallelism.
// A route with neither is the whole block. Routes are set per micro-batch (per slot)
// before its forward and hold through its backward (GptModel::set_routes).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <vector>

namespace zt {

struct BlockRoute {
  bool skip = false;
  int kept = 0;                    // tokens per sequence the block runs on; 0 = all of them
  std::vector<int32_t> positions;  // B x kept ascending positions when kept > 0
  float scale = 1.0f;              // of the two branch outputs

  bool whole() const { return !skip && kept == 0 && scale == 1.0f; }
};

}  // namespace zt
