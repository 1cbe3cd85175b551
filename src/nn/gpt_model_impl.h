// GptModelImpl<A>: the GptModel for one activation storage type, A = float (f32 compute)
// or half_t (bf16/f16 compute: the backend's half_ops() table). Everything the model
// computes goes through k_, an ActivationOps<A>, tensor parallelism included: what is
// summed across tp ranks (row-parallel partials, the embedding's rows, input gradients)
// is summed in fp32 in the scratch's tp_partial, then rounded to A once.
// The Llama family runs in the same class (one arena, checkpointing, pipeline slots and
// tensor parallelism for both): its weights bind to lw_/ldw_, and its block, embedding and
// head math is in llama_model.cc, chosen by config.is_llama().
// Internal to nn/: the engine sees GptModel only.
// Thread-safety: as GptModel.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "nn/gpt_activations.h"
#include "nn/gpt_model.h"
#include "nn/llama_params.h"

namespace zt {

template <typename A>
class GptModelImpl final : public GptModel {
 public:
  GptModelImpl(const GptConfig& config, const GptModelOptions& options);

  void bind(void* params, float* grads) override;
  void bind_layer(int layer, void* params_at, float* grads_at) override;
  void* bound_params(int layer) const override;

  StatusOr<LossSum> loss(const int32_t* targets) override;
  Status forward_embedding(const int32_t* tokens, int B, int T) override;
  Status forward_block(int layer) override;
  Status forward_head() override;
  Status backward_head(const int32_t* targets, float dloss) override;
  Status backward_block(int layer) override;
  void backward_embedding(const int32_t* tokens) override;

  void* stage_input() override { return slot().encoded; }
  const void* stage_output() const override { return block_input(options_.layout.end(config_)); }
  void* stage_output_grad() override { return arena_.scratch.dresidual; }
  void logits_row(int64_t row, float* out) const override;
  size_t activation_bytes() const override { return arena_.arena.bytes(); }
  size_t saved_activation_bytes() const override { return arena_.saved_bytes; }

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
  // Llama's RoPE on x (B_, T_, NH heads), at the active route's positions when one is set.
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
  // Llama (llama_model.cc).
  Status llama_block_forward(int layer, const A* res_in, const BlockActivationsT<A>& a);
  Status llama_block_backward(int layer, const BlockActivationsT<A>& a, const A* res_in);
  Status llama_forward_embedding(const int32_t* tokens);
  Status llama_forward_head();
  Status llama_backward_head(A* dlogits);
  void llama_backward_embedding(const int32_t* tokens);
  // dinp (N, C) = the sum of each column-parallel layer's input gradient (dout_i @ weight_i),
  // summed in fp32 (over tp ranks too) and rounded to A once; dweight_i +=.
  struct ColumnGrad {
    float* dweight;
    const A* dout;
    const A* weight;
    int out_dim;
  };
  Status llama_column_backward(A* dinp, const A* inp, std::initializer_list<ColumnGrad> layers, int64_t N);
  // The kv heads' gradients (s.k, s.v) from the packed dqkv: each sums its rep query heads'.

  const ActivationOps<A>& k_;
  const KernelOps& f32_;  // vocab_xent_finish (fp32 in every precision)
  GptWeightsT<A> w_;       // bound parameter views
  GptWeightsT<float> dw_;  // bound gradient views
  LlamaWeightsT<A> lw_;       // Llama: bound parameter views
  LlamaWeightsT<float> ldw_;  // Llama: bound gradient views
  GptActivationArenaT<A> arena_;
  std::vector<float> loss_host_;  // the last loss() call's per-token losses, copied to the host
  const BlockRoute* active_route_ = nullptr;  // the routed block being computed (rope())
  float branch_scale_ = 1.0f;                 // the block being computed scales its branches by this
  std::vector<float> act_f32_;                // quantize_input's fp32 copy of a 16-bit input
};

}  // namespace zt
