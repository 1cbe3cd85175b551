// The activation arena of a GptModel: what the forward saves for the backward, per
// in-flight micro-batch ("slot": a pipeline stage keeps several), and the backward's
// scratch, shared by all slots. Shapes use B, T of the current call; tensor-parallel
// widths are the rank's slice (Cl = C/tp, NHl = n_head/tp, Vl = padded vocab/tp).
//
// A checkpointed block keeps only its input; its internals point into one shared
// recompute set, refilled by re-running the block's forward in backward. Its output is
// kept in full if the next owned block needs it (a block that is not checkpointed, the
// head, the next pipeline stage); otherwise (partition_activations with tp > 1) it goes
// to one of two rotating live buffers and the next block keeps just its 1/tp slice,
// all-gathered before the recompute. With an activation stash (activation_stash.h) the
// same two live buffers rotate, and the input of every checkpointed block after the
// first goes to the stash instead of the arena (stashed_input).
//
// Slots are named by their role in the block; the config's knobs decide which exist: norm
// means for LayerNorm only, mlp_up (and the scratch's dmlp_up) for SwiGLU, the separate q,
// k, v scratch for unfused projections (qkv then holds the rotated q with each rank's kv
// heads repeated for its query heads), RoPE tables for rotary positions. F, the rank's MLP
// width, is mlp_width()/tp. Under sequence parallelism T is this rank's tokens of each
// sequence; attention's probabilities and the RoPE table span the whole sequence.
//
// A is the activation storage (float, or half_t for bf16/f16 compute): every activation
// and activation gradient is A; LayerNorm statistics, losses and cross-entropy statistics
// stay float. Buffers are carved from one byte arena, each 64-byte aligned.
#pragma once

#include <cstddef>
#include <vector>

#include <cstdint>

#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "backend/backend.h"

namespace zt {

template <typename A>
struct BlockActivationsT {
  A* norm1 = nullptr;       // (B, T, C)   the first norm's output, input of the q, k, v projections
  float* norm1_mean = nullptr;  // (B, T)      LayerNorm only
  float* norm1_rstd = nullptr;  // (B, T)
  A* qkv = nullptr;       // (B, T, 3Cl)
  A* att = nullptr;       // (B, NHl, T, T) softmax probabilities P (causal; zeros above the diagonal);
                          // under sp (B, NH/sp, T sp, T sp): the rank's heads over the whole sequence.
                          // Flash attention: null, or under sp the head-layout output (B, T sp, C/sp)
  float* lse = nullptr;   // flash attention: (B, NHl, T) each row's log-sum-exp (under sp as att)
  A* att_out = nullptr;      // (B, T, Cl)  attention output, input of attn_out
  A* res_attn = nullptr;      // (B, T, C)   residual after attention
  A* norm2 = nullptr;       // (B, T, C)
  float* norm2_mean = nullptr;  // (B, T)
  float* norm2_rstd = nullptr;  // (B, T)
  A* mlp_in = nullptr;       // (B, T, F)   mlp_in's output (the GELU input, or SwiGLU's gate)
  A* mlp_up = nullptr;    // (B, T, F)   SwiGLU only: mlp_up's output
  A* mlp_act = nullptr;  // (B, T, F)   GELU(mlp_in) or silu(mlp_in) * mlp_up: input of mlp_out
  A* output = nullptr;      // (B, T, C)   the block's output
  // MoE blocks only (in place of mlp_*; fp32): N = B T tokens, E experts, k per token, cap
  // rows per expert (moe_capacity_bound), Ie the expert width.
  float* moe_logits = nullptr;       // (N, E) router logits
  int32_t* moe_expert = nullptr;     // (N, k) the gate's choices (-1: dropped), in backend memory
  int32_t* moe_location = nullptr;   // (N, k)
  float* moe_weight = nullptr;       // (N, k) combine weights
  // Expert rows in the compact layout (kernels/moe_ops.h): R = this rank's kept slots, or
  // with expert parallelism the rows its experts received from the ep peers.
  float* moe_buf = nullptr;          // (R, C) the experts' input rows
  float* moe_h_in = nullptr;         // (R, Ie) each expert's input projection
  float* moe_h_up = nullptr;         // (R, Ie) SwiGLU's up projection
  float* moe_act = nullptr;          // (R, Ie)
  float* moe_out = nullptr;          // (kept slots, C) the expert outputs, back in this rank's layout
  float* moe_routed = nullptr;       // (N, C) their combined output
  // With a dense MLP beside the experts (S its width): its projections, output, mixing logits.
  float* moe_sh_in = nullptr;        // (N, S)
  float* moe_sh_up = nullptr;        // (N, S) SwiGLU
  float* moe_sh_act = nullptr;       // (N, S)
  float* moe_sh_out = nullptr;       // (N, C)
  float* moe_mix_logits = nullptr;   // (N, 1 or 2)
  // Checkpointed blocks only.
  bool checkpointed = false;
  A* saved_input_part = nullptr;  // (B*T*C/tp) this rank's slice of the input (partitioned), else null
  bool stashed_input = false;     // the input is kept by the ActivationStash
};

// One in-flight micro-batch.
template <typename A>
struct GptActivationsT {
  A* encoded = nullptr;  // (B, T, C) the stage input: embedding output, or received from the previous stage
  std::vector<BlockActivationsT<A>> blocks;  // indexed by global block id; blocks of other stages stay empty
  A* norm_f = nullptr;         // (B, T, C)
  float* norm_f_mean = nullptr;    // (B, T)
  float* norm_f_rstd = nullptr;    // (B, T)
  A* logits = nullptr;      // (B, T, Vl); overwritten in place by dlogits during backward
  float* losses = nullptr;      // (B, T)
  float* xent_stats = nullptr;  // (B, T, 2) max and log-sum-exp per row, saved for the backward
};

// Shared by every slot: backward scratch and the recompute set.
template <typename A>
struct GptScratchT {
  A* dresidual = nullptr;  // (B, T, C) gradient flowing down the residual stream
  A* dnorm = nullptr;        // (B, T, C) gradient of a norm's output / of att_out
  A* dqkv = nullptr;       // (B, T, 3Cl)
  A* dmlp = nullptr;       // (B, T, F)
  // Unfused attention and SwiGLU only.
  A* dmlp_up = nullptr;         // (B, T, F) the up projection's gradient
  A* q = nullptr;           // (B, T, Cl) q before packing, then dq
  A* k = nullptr;           // (B, T, KVl) k before packing, then dk
  A* v = nullptr;           // (B, T, KVl) v before packing, then dv
  float* grad_tmp = nullptr;  // (B, T, C) a second fp32 input-gradient partial, added into tp_partial
  float* freqs = nullptr;     // (T sp, HD/2, 2) RoPE cos/sin, every position of the sequence
  A* sp_send = nullptr;       // (B, T, 3C) sequence parallelism: Ulysses' exchange buffers
  A* sp_recv = nullptr;       // (B, T, 3C)
  float* tp_partial = nullptr;  // (B, T, C) fp32 sums across tp ranks: row-parallel partials,
                                // the embedding's partial rows, 16-bit gradients being all-reduced
                                // (also without tp when several projections share an input: their input gradients sum in fp32)
  float* tp_rows = nullptr;         // (tp, B, T) per-row maxima of the vocab-parallel softmax (tp > 1)
  float* tp_row_sums = nullptr;     // (B, T, 2) sum of exp and target logit, all-reduced (tp > 1)
  BlockActivationsT<A> recompute;       // internals of the checkpointed block being recomputed
  A* live[2] = {nullptr, nullptr};  // (B, T, C) rotating outputs of partitioned checkpointed blocks
  A* gathered_input = nullptr;      // (B, T, C) a checkpoint input brought back: all-gathered, or loaded from the stash
  A* gathered_ahead = nullptr;      // (B, T, C) with a stash that fills ahead, odd blocks' inputs (the next block's
                                    // copy lands here while the current block's input is in use)
  // Block routing (block_route.h) only.
  A* route_rows = nullptr;     // (B, kept, C) a routed block's input rows, then its output rows
  A* route_grad = nullptr;     // (B, kept, C) the output gradient of those rows, then their input gradient
  float* route_freqs = nullptr;  // rotary: (B, kept, HD) RoPE cos/sin at the kept positions
  A* route_branch = nullptr;     // (B, T, C) a scaled block's branch output, or its scaled gradient
  float* route_f32 = nullptr;    // (B, T, C) the same in fp32, being scaled
  // MoE blocks only.
  float* moe_y = nullptr;        // (B, T, C) the routed and dense outputs mixed
  float* moe_dmoe = nullptr;     // (B, T, C) mixing's gradients: of the routed output,
  float* moe_ddense = nullptr;   // (B, T, C) of the dense MLP's output,
  float* moe_dmix = nullptr;     // (B, T, 2) and of the mixing logits
  float* moe_dx = nullptr;       // (B, T, C) the router's input gradient
  float* moe_dbuf = nullptr;     // (R, C) the experts' input gradients (and ep's outputs before return)
  float* moe_dout = nullptr;     // (kept slots, C) the outputs' gradient (and ep's dispatched rows)
  float* moe_xchg = nullptr;     // (R, C) expert parallelism: the gradients the owners receive
  // 16-bit compute: the MoE MLP's fp32 island (nn/gpt_moe.cc): its input, output gradient
  // (and the forward's output sum), input gradient, and the weights it widens: the router,
  // the dense MLP beside the experts with its gate, and one expert at a time.
  float* moe_x32 = nullptr;      // (B, T, C)
  float* moe_dy32 = nullptr;     // (B, T, C)
  float* moe_dx32 = nullptr;     // (B, T, C)
  float* moe_w32 = nullptr;      // (those weights of the largest MoE block)
  float* moe_dweight = nullptr;  // (B, T, k)
  float* moe_dlogits = nullptr;  // (B, T, E)
  float* moe_experts = nullptr;  // the experts' backward scratch (MoeOps::experts_scratch_floats)
};

// What sizes an activation arena beyond the model and the layout.
struct ArenaShape {
  int max_batch = 1;
  int max_seq = 1;  // this rank's tokens per sequence
  int slots = 1;
  std::vector<bool> checkpoint;  // per global block, true to keep only its input (empty: none)
  bool partition = false;        // partition_activations (tp > 1)
  bool stash = false;            // the inputs of checkpointed blocks go to an ActivationStash
  bool stash_ahead = false;      // ... one that fills_ahead(): a second buffer to bring them back into
  bool routing = false;          // the block-routing scratch (block_route.h)
  bool flash = false;            // flash attention: each block saves lse, not att's probabilities
  bool shared_head = false;      // one set of head activations for every slot: the schedule runs a
                                 // micro-batch's head backward right after its forward
};

// The blocks of this stage whose inputs an ActivationStash keeps, ascending: checkpointed,
// and not the first of their chunk (whose input is the slot's stage input).
std::vector<int> stashed_blocks(const GptConfig& cfg, const GptLayout& layout, const std::vector<bool>& checkpoint);

template <typename A>
struct GptActivationArenaT {
  std::vector<GptActivationsT<A>> slots;
  GptScratchT<A> scratch;
  size_t saved_bytes = 0;    // what the forward keeps for the backward, all slots
  size_t scratch_bytes = 0;  // backward scratch and recompute buffers
  Arena arena;  // allocated by the model's backend

  // Bytes the arena of allocate() with these arguments holds, without allocating
  // (the memory estimator's activation figure).
  static size_t count(const GptConfig& config, const GptLayout& layout, const ArenaShape& shape);
  static GptActivationArenaT allocate(const GptConfig& config, const GptLayout& layout, const ArenaShape& shape,
                                     const Backend& backend);
};

using BlockActivations = BlockActivationsT<float>;
using GptActivations = GptActivationsT<float>;
using GptScratch = GptScratchT<float>;
using GptActivationArena = GptActivationArenaT<float>;

}  // namespace zt
