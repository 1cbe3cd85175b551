// GptModelImpl<A>: the GptModel for one activation storage type, A = float (f32 compute)
// or half_t (bf16/f16 compute: the backend's half_ops() table). Everything the model
// computes goes through k_, an ActivationOps<A>, tensor parallelism included: what is
// summed across tp ranks (row-parallel partials, the embedding's rows, input gradients)
// is summed in fp32 in the scratch's tp_partial, then rounded to A once.
// Internal to nn/: the engine sees GptModel only.
// Thread-safety: as GptModel.
#pragma once

#include <type_traits>

#include "nn/gpt_activations.h"
#include "nn/gpt_model.h"

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
  // A column-parallel layer's backward: dinp = dout @ weight, summed over tp ranks in fp32
  // (tp > 1) and rounded to A once; dweight, dbias +=.
  Status column_parallel_backward(A* dinp, float* dweight, float* dbias, const A* dout, const A* inp,
                                  const A* weight, int64_t N, int C, int OC);
  bool tp() const { return options_.layout.tp_size > 1; }

  const ActivationOps<A>& k_;
  const KernelOps& f32_;  // vocab_xent_finish (fp32 in every precision)
  GptWeightsT<A> w_;       // bound parameter views
  GptWeightsT<float> dw_;  // bound gradient views
  GptActivationArenaT<A> arena_;
};

}  // namespace zt
