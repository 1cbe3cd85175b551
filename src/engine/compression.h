// Compressor: DeepSpeed's compression_training weight and activation quantization
// (docs/design/deepspeed-efficiency-rules.md 5.1-5.5) for the Trainer.
//
// Selection: a group's module regexes are searched (as re.search) in each tensor's
// HuggingFace-style module name (transformer.h.3.mlp.c_fc, model.layers.0.self_attn.q_proj,
// transformer.wte); weight quantization takes the matched Linear and embedding weights,
// activation quantization the inputs of the matched Linear layers. A module matched by two
// groups is an error, as in DeepSpeed; a group that matches nothing is reported in the banner.
//
// Weights: the model computes with a copy of each touched layer whose selected weights are
// quantize-dequantized (kernels/cpu/fake_quant.h), while the optimizer updates the real
// ones, so the gradient passes straight through (DeepSpeed's STE). With
// quantize_weight_in_forward the copy uses target_bits (linear weights in quantize_groups
// groups, embeddings one group per row); otherwise MoQ: the bits start at start_bits and
// drop by one when the count of quantize calls (one per forward of step 0, one after every
// step that was not skipped) reaches a period that doubles at each drop, and
// fp16_mixed_quantize blends ratio x + (1 - ratio) q(x). A technique turns on once the
// count of non-skipped steps reaches its schedule_offset (checked at step 0 with 0).
// Arithmetic is fp32 on the fp32 value of the compute copy (DeepSpeed's MoQ computes in
// fp16: a difference of one fp16 rounding, documented).
// Thread-safety: one training thread.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/status.h"
#include "data/efficiency_options.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "nn/gpt_model.h"
#include "nn/layer_walk.h"
#include "tensor/tensor_spec.h"

namespace zt {

class Compressor {
 public:
  // table: this rank's tensors; notes receives what each group selected.
  static StatusOr<std::unique_ptr<Compressor>> create(const CompressionOptions& options, const ParamTable& table,
                                                      const GptConfig& model, const Backend& backend,
                                                      std::vector<std::string>* notes);
  bool touches(int layer) const;
  // A copy of the layer's parameters (compute dtype, at `params`) with its selected weights
  // quantized as the schedule says now; valid until the next call for the same layer.
  StatusOr<void*> compressed(int layer, const void* params);
  void begin_forward(int64_t steps_done);  // MoQ's quantize call on every forward of step 0
  void after_step(bool skipped);            // the scheduler's count and MoQ's call after a step
  bool activations_on() const { return act_on_; }
  bool activations_symmetric() const { return o_.activation.symmetric; }
  const std::vector<BlockActBits>& activation_bits() const { return act_bits_; }
  Json state() const;
  Status set_state(const Json& state, const std::string& where);

 private:
  struct Selected {
    int spec;           // index in the table
    int group;          // index in options.weight.groups_of_modules
    int bits;           // MoQ's current bits (target_bits in forward mode)
    int64_t period;
    bool embedding;     // one group per row in forward mode
  };
  Compressor(const CompressionOptions& o, const ParamTable& table, const Backend& backend)
      : o_(o), table_(table), backend_(backend) {}
  Status select_weights(const GptConfig& model, std::vector<std::string>* notes);
  Status select_activations(const GptConfig& model, std::vector<std::string>* notes);
  void quantize_call();
  void quantize_tensor(const Selected& s, float* x) const;

  CompressionOptions o_;
  const ParamTable& table_;
  const Backend& backend_;
  std::vector<Selected> weights_;
  std::vector<BlockActBits> act_bits_;
  std::vector<std::vector<unsigned char>> copies_;  // per layer slot: the compressed copy
  std::vector<float> scratch_;
  int64_t training_steps_ = 0;  // non-skipped optimizer steps (DeepSpeed's compression scheduler)
  int64_t qsteps_ = 0;          // MoQ's quantize calls
  double ratio_ = 1.0;          // fp16_mixed_quantize's blend
  bool weight_on_ = false, act_on_ = false;
};

// The layer walk's parameters with compression_training on: a touched layer is read as its
// quantized copy of the underlying source's values.
class CompressedParams final : public LayerParamSource {
 public:
  CompressedParams(LayerParamSource& inner, Compressor& compressor) : inner_(inner), compressor_(compressor) {}
  void begin_micro(bool with_backward) override { inner_.begin_micro(with_backward); }
  StatusOr<void*> layer_params(int layer) override {
    ZT_ASSIGN_OR_RETURN(void* p, inner_.layer_params(layer));
    if (!compressor_.touches(layer)) return p;
    return compressor_.compressed(layer, p);
  }
  void release(int layer) override { inner_.release(layer); }

 private:
  LayerParamSource& inner_;
  Compressor& compressor_;
};

// The HuggingFace-style module name of a tensor ("transformer.h.3.mlp.c_fc" for GPT-2's
// "h.3.mlp.c_fc.weight", "model.layers.0.mlp.up_proj" for Llama, "lm_head").
std::string hf_module_name(const GptConfig& model, const std::string& tensor);

}  // namespace zt
