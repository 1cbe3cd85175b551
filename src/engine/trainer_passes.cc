// Training passes without pipelining: each micro-batch through every layer by the one
// layer walk (nn/layer_walk.h), reading parameters from the model states (through
// compression's quantized copies when it is on) and handing gradients to the GradReducer.
#include "engine/trainer.h"

#include "core/timer.h"

namespace zt {

LayerParamSource& Trainer::layer_source() {
  if (compressed_params_ != nullptr) return *compressed_params_;
  return *states_;
}

// Before micro-batch i's forward: its block routes, and compression's step-0 quantize call
// and activation switch.
Status Trainer::prepare_micro(size_t i, int B, int T) {
  ZT_RETURN_IF_ERROR(model_->set_routes(step_routes_[i], B, T));
  // MoE routing noise: keyed by the run's seed, the step and the micro-batch's place in the
  // global batch, so every layout draws the same for the same tokens.
  const uint64_t global_micro = static_cast<uint64_t>(dp_->rank()) * step_routes_.size() + i;
  model_->set_moe_noise_key((options_.seed * 0x100000001b3ull + static_cast<uint64_t>(global_step_)) * 0x9e3779b1ull +
                            global_micro);
  if (compressor_ == nullptr) return Status::OK();
  compressor_->begin_forward(global_step_);
  model_->set_activation_quant(compressor_->activations_on() ? &compressor_->activation_bits() : nullptr,
                               compressor_->activations_symmetric());
  return Status::OK();
}

Json Trainer::schedules_state() const {
  Json j = efficiency_.state();
  if (compressor_ != nullptr) j["compression"] = compressor_->state();
  return j;
}

Status Trainer::restore_schedules(const Json& state, const std::string& where) {
  ZT_RETURN_IF_ERROR(efficiency_.set_state(state, where));
  if (compressor_ != nullptr && state.contains("compression")) ZT_RETURN_IF_ERROR(compressor_->set_state(state["compression"], where));
  return Status::OK();
}

Status Trainer::run_micro_batches(const std::vector<MicroBatch>& mbs, int B, int T, float dloss, StepStats* stats) {
  LayerWalk walk(*model_);
  for (size_t i = 0; i < mbs.size(); ++i) {
    const MicroBatch& mb = mbs[i];
    reducer_->begin_micro(i + 1 == mbs.size());
    ZT_RETURN_IF_ERROR(prepare_micro(i, B, T));
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(walk.forward(mb, B, T, /*with_backward=*/true, layer_source(), &layer_times_));
    note_moe_routing();
    Stopwatch loss_clock;
    ZT_RETURN_IF_ERROR(model_->loss_into(mb.targets, staging_->loss_slot(i)));
    layer_times_.forward_s.back() += loss_clock.seconds();
    stats->forward_s += sw.seconds();
    sw.restart();
    ZT_RETURN_IF_ERROR(walk.backward(mb, dloss, layer_source(), *reducer_, &layer_times_));
    Stopwatch reduce_clock;
    const Status reduced = reducer_->end_micro();
    layer_times_.reduce_wait_s += reduce_clock.seconds();
    ZT_RETURN_IF_ERROR(reduced);
    stats->backward_s += sw.seconds();
  }
  return Status::OK();
}

}  // namespace zt
