// LayerWalk: the one walk of a micro-batch through the layers a rank holds. Every way of
// training runs it: data parallelism and ZeRO 0-3 (with offload and compression), tensor
// parallelism, each pipeline stage, and the parameter-server worker. What differs between
// them is only where a layer's parameters come from and where its gradients go, and that
// is the two interfaces below:
// - LayerParamSource: ZeRO's ModelStates (the full arena, or a ZeRO-3 gather with
//   prefetch), compression's quantized copies over it, the parameter-server worker's
//   pulls (a layer's slices waited for on its first use in a step).
// - LayerGradSink: GradReducer (bucketed all-reduce or reduce-scatter as layers finish),
//   the parameter-server worker's bucketed pushes, or InPlaceGrads (a pipeline stage's
//   accumulation, reduced after its schedule).
// Order of calls (the fetch and bucket orders depend on it, so it is fixed here):
//   forward:  embedding (or begin_stage), blocks first to last, ln_f and the head's
//             weight matrix (the embedding, or a last stage's tied copy); with_backward
//             keeps the head's two layers held for backward.
//   backward: the head's two layers' gradients acquired, the head's backward, blocks
//             last to first (each fetched again), the embedding's backward.
// Invariants: a layer is bound (bind_layer) right before the model calls that read it; a
// forward binds no gradients; every layer_params has its release.
// Thread-safety: one thread drives a walk (the model's).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "nn/gpt_model.h"
#include "nn/gpt_training.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Where a layer's parameters are for the next model call, and giving them back.
class LayerParamSource {
 public:
  virtual ~LayerParamSource() = default;
  // A micro-batch's layer sequence starts (ZeRO-3: its fetch order).
  virtual void begin_micro(bool with_backward) = 0;
  // The layer's range of the parameter arena, in the model's parameter dtype.
  virtual StatusOr<void*> layer_params(int layer) = 0;
  virtual void release(int layer) = 0;
};

// Where backward puts a layer's gradients, and what follows once they are complete.
class LayerGradSink {
 public:
  virtual ~LayerGradSink() = default;
  // A micro-batch starts; `last` is the last of the optimizer step.
  virtual void begin_micro(bool last) = 0;
  // fp32, the layer's range of the gradient arena (accumulated into: +=).
  virtual float* acquire_layer(int layer) = 0;
  virtual void layer_done(int layer) = 0;
  // Everything the micro-batch started has finished; its first failure.
  virtual Status end_micro() = 0;
};

// Gradients accumulated in place in a full arena, nothing sent (a pipeline stage: its
// reductions run after the schedule).
class InPlaceGrads final : public LayerGradSink {
 public:
  InPlaceGrads(float* grads, const ParamTable& table) : grads_(grads), table_(table) {}
  void begin_micro(bool) override {}
  float* acquire_layer(int layer) override { return grads_ + table_.layer_range(layer).begin; }
  void layer_done(int) override {}
  Status end_micro() override { return Status::OK(); }

 private:
  float* grads_;
  const ParamTable& table_;
};

// Where the last step's time went, per module of the model: index 0 the embeddings,
// 1..n_layer the blocks, n_layer + 1 ln_f with the LM head and the loss. Parameter
// fetches (ZeRO-3) are part of the layer that waited for them.
struct LayerTimes {
  std::vector<double> forward_s, backward_s;
  double reduce_wait_s = 0.0;  // backward's wait for the last gradient reductions
};

class LayerWalk {
 public:
  // The model's own layout says which layers the walk visits: all it holds, or on an
  // interleaved pipeline rank the chunk of its current slot (GptModel::part).
  explicit LayerWalk(GptModel& model) : model_(model) {}

  // Forward of one B x T micro-batch through the held layers (a stage without the
  // embeddings starts from its received input); the loss is the caller's. times: added
  // to per module when not null (sized n_layer + 2).
  Status forward(const MicroBatch& mb, int B, int T, bool with_backward, LayerParamSource& params,
                 LayerTimes* times = nullptr);
  // After forward(with_backward = true) of the same micro-batch, with the head still held.
  Status backward(const MicroBatch& mb, float dloss, LayerParamSource& params, LayerGradSink& grads,
                  LayerTimes* times = nullptr);

 private:
  // The layer holding the head's weight matrix when it is not the final norm's: the
  // embedding (bound again, tied or not), a last stage's tied copy, or -2 for none.
  int head_matrix_layer() const;
  Status forward_blocks(LayerParamSource& params, LayerTimes* times);
  Status forward_head(bool with_backward, LayerParamSource& params, LayerTimes* times);
  Status backward_head(const MicroBatch& mb, float dloss, LayerParamSource& params, LayerGradSink& grads);

  GptModel& model_;
};

}  // namespace zt
