// GptModelImpl<A>: the GptModel for one activation storage type, A = float (f32 compute)
// or half_t (bf16/f16 compute: the backend's half_ops() table). Everything the model
// computes goes through k_, an ActivationOps<A>, tensor parallelism included: what is
// summed across tp ranks (row-parallel partials, the embedding's rows, input gradients)
// is summed in fp32 in the scratch's tp_partial, then rounded to A once.
// One class computes every configuration: each step of the block (the norm, the q/k/v
// projections with or without RoPE and grouped-query packing, the GELU or SwiGLU MLP)
// follows the config's knobs (gpt_layers.cc), never its family.
// Internal to nn/: the engine sees GptModel only.
// Thread-safety: as GptModel.
#pragma once

#include <functional>

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "nn/gpt_activations.h"
#include "nn/gpt_model.h"
#include "nn/gpt_params.h"
#include "kernels/moe_gate.h"
#include "kernels/moe_ops.h"
#include "nn/moe_exchange.h"

namespace zt {

template <typename A>
class GptModelImpl final : public GptModel {
 public:
  GptModelImpl(const GptConfig& config, const GptModelOptions& options);

  void bind(void* params, float* grads) override;
  void bind_layer(int layer, void* params_at, float* grads_at) override;
  void* bound_params(int layer) const override;

  Status loss_into(const int32_t* targets, double* out) override;
  Status forward_embedding(const int32_t* tokens, int B, int T) override;
  Status forward_block(int layer) override;
  Status forward_head() override;
  Status backward_head(const int32_t* targets, float dloss) override;
  Status backward_block(int layer) override;
  void backward_embedding(const int32_t* tokens) override;

  void* stage_input() override { return slot().encoded; }
  const void* stage_output() const override { return block_input(part_.end); }  // the chunk's output
  void* stage_output_grad() override { return arena_.scratch.dresidual; }
  void logits_row(int64_t row, float* out) const override;
  size_t activation_bytes() const override { return arena_.arena.bytes(); }
  size_t saved_activation_bytes() const override { return arena_.saved_bytes; }
  double moe_aux_loss() const override;
  const std::vector<MoeGateResult>& moe_routing() const override { return gates_[static_cast<size_t>(slot_)]; }

  const GptActivationsT<A>& activations() const { return slot(); }

 private:
  const GptActivationsT<A>& slot() const { return arena_.slots[static_cast<size_t>(slot_)]; }
  GptActivationsT<A>& slot() { return arena_.slots[static_cast<size_t>(slot_)]; }
  const A* block_input(int layer) const;
  Status block_forward(int layer, const A* res_in, const BlockActivationsT<A>& a);
  Status row_parallel_forward(A* out, const A* inp, const A* weight, const A* bias, const A* residual, int64_t N,
                              int in_dim);
  Status recompute(int layer, const A** res_in);
  // The block's backward from its (recomputed) activations; s.dresidual in and out.
  Status block_backward(int layer, const BlockActivationsT<A>& a, const A* res_in);
  // Routed blocks (gpt_block_route.cc).
  Status routed_forward(int layer, const BlockRoute& r, const A* res_in, const BlockActivationsT<A>& a);
  Status routed_backward(int layer, const BlockRoute& r);
  void gather_rows(A* out, const A* in, const BlockRoute& r, int T, size_t width) const;
  void scatter_rows(A* out, const A* in, const BlockRoute& r, int T, size_t width) const;
  void fill_route_freqs(const BlockRoute& r);
  // RoPE on x (B_, T_, NH heads), at the active route's positions when one is set.
  void rope(A* x, int NH, bool backward);
  // Activation quantization of linear slot `slot`'s input x (rows x width), per token.
  void quantize_input(int layer, int slot, A* x, int64_t rows, int width);
  // A branch output's gradient under branch_scale_ (dres, or its scaled copy).
  const A* branch_grad(const A* dres, int64_t n);
  // A column-parallel layer's backward: dinp = dout @ weight, summed over tp ranks in fp32
  // (tp > 1) and rounded to A once; dweight, dbias +=.
  Status column_parallel_backward(A* dinp, float* dweight, float* dbias, const A* dout, const A* inp,
                                  const A* weight, int64_t N, int C, int OC);
  bool tp() const { return options_.layout.tp_size > 1; }
  // Sequence parallelism: the first position of this rank's tokens.
  int seq_offset() const { return options_.layout.sp_rank * T_; }
  // The attention step (gpt_attention.cc): a.att_out from a.qkv; s.dqkv from s.dnorm.
  Status attention_forward(const BlockActivationsT<A>& a);
  Status attention_backward(const BlockActivationsT<A>& a);
  // Ulysses' exchange of this micro-batch's `in` (`groups` column groups of `width`) into
  // `out` (may be `in`), to the head-sharded layout or back (nn/ulysses.h).
  Status ulysses(const A* in, A* out, int groups, int width, bool to_heads);
  // Sequence parallelism exchanging q, k and v unpacked (DeepSpeed's way, when sp divides
  // the kv heads of split projections): the kv heads travel once, not once per query head.
  bool sp_unpacked() const;
  Status ulysses_qkv(bool to_heads);  // s.q, s.k, s.v to the head layout or back
  // The block's steps by knob (gpt_layers.cc). norm_*: LayerNorm or RMSNorm over C.
  void norm_forward(A* out, float* mean, float* rstd, const A* x, const A* w, const A* b, int64_t N);
  void norm_backward(A* dx, float* dw, float* db, const A* dout, const A* x, const A* w, const float* mean,
                     const float* rstd, int64_t N);
  // a.qkv from a.norm1: the fused projection, or q, k, v, RoPE and grouped-query packing.
  Status qkv_forward(const BlockWeightsT<A>& w, const BlockActivationsT<A>& a, int64_t N);
  // s.dnorm = the input gradient of the q, k, v projections from s.dqkv; their weight grads +=.
  Status qkv_backward(const BlockWeightsT<A>& w, const BlockWeightsT<float>& dw, const BlockActivationsT<A>& a,
                      int64_t N);
  // a.mlp_act from a.norm2: GELU(mlp_in) or silu(gate) * up.
  void mlp_in_forward(const BlockWeightsT<A>& w, const BlockActivationsT<A>& a, int64_t N);
  // s.dnorm from s.dmlp (the gradient of mlp_act); the input projections' grads +=.
  Status mlp_in_backward(const BlockWeightsT<A>& w, const BlockWeightsT<float>& dw, const BlockActivationsT<A>& a,
                         int64_t N);
  // dinp (N, C) = the sum of each column-parallel layer's input gradient (dout_i @ weight_i);
  // dweight_i, dbias_i +=. One layer: column_parallel_backward. Several (q, k, v; gate, up):
  // summed in fp32 (over tp ranks too) and rounded to A once.
  struct ColumnGrad {
    float* dweight;
    float* dbias;
    const A* dout;
    const A* weight;
    int out_dim;
  };
  Status column_backward(A* dinp, const A* inp, std::initializer_list<ColumnGrad> layers, int64_t N);
  // An MoE block's MLP (gpt_moe.cc): a.output from a.norm2 and a.res_attn; its backward
  // takes s.dresidual and leaves the norm2 input gradient in s.dnorm.
  Status moe_forward(int layer, const BlockActivationsT<A>& a, int64_t N);
  Status moe_backward(int layer, const BlockActivationsT<A>& a, int64_t N);
  // The MLP itself in fp32 from the norm2 output x: forward gives y, backward takes dy and
  // assigns dx. 16-bit compute calls them with widened copies (widened_moe: block l's MoE
  // tensors as fp32 in the scratch, the experts one at a time through expert_widener_;
  // valid until the next call).
  StatusOr<const float*> moe_mlp_forward(int layer, const BlockActivationsT<A>& a, const float* x,
                                         const BlockWeightsT<float>& w, int64_t N);
  Status moe_mlp_backward(int layer, const BlockActivationsT<A>& a, const float* x, const BlockWeightsT<float>& w,
                          const float* dy, float* dx, int64_t N);
  BlockWeightsT<float> widened_moe(int layer);
  std::vector<double> moe_dgate(int layer, int64_t N) const;
  std::vector<const MoeGateResult*> slot_routings() const;  // this stage's MoE blocks, current slot

  const ActivationOps<A>& k_;
  const KernelOps& f32_;  // vocab_xent_finish (fp32 in every precision)
  GptWeightsT<A> w_;       // bound parameter views
  GptWeightsT<float> dw_;  // bound gradient views
  GptActivationArenaT<A> arena_;
  const BlockRoute* active_route_ = nullptr;  // the routed block being computed (rope())
  float branch_scale_ = 1.0f;                 // the block being computed scales its branches by this
  const MoeOps* moe_ = nullptr;               // the backend's MoE table (an MoE model only)
  std::vector<std::vector<MoeGateResult>> gates_;  // per slot, per global block: the last routing (host)
  std::vector<std::vector<MoeExchange>> exchanges_;  // expert parallelism: per slot, per global block
  std::function<MoeExpertWeights(int)> expert_widener_;  // 16-bit compute: set by widened_moe()
};

}  // namespace zt
