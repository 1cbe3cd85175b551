// Training passes without pipelining: one micro-batch through every layer, binding each
// layer's parameters (fetched by ZeRO-3's ParamFetcher when they are sharded) and, in
// backward, its gradient destination (GradReducer: the full arena or a bucket).
#include "engine/trainer.h"

#include "core/timer.h"

namespace zt {

// With compression_training, a touched layer's parameters are a quantized copy (compression.h).
StatusOr<void*> Trainer::layer_params(int layer) {
  ZT_ASSIGN_OR_RETURN(void* p, states_->layer_params(layer, model_->param_table()));
  if (compressor_ == nullptr || !compressor_->touches(layer)) return p;
  return compressor_->compressed(layer, p);
}

// Before micro-batch i's forward: its block routes, and compression's step-0 quantize call
// and activation switch.
Status Trainer::prepare_micro(size_t i, int B, int T) {
  ZT_RETURN_IF_ERROR(model_->set_routes(step_routes_[i], B, T));
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

void Trainer::drop_layer_params(int layer) { states_->release(layer); }

Status Trainer::forward_pass(const MicroBatch& mb, bool with_backward) {
  GptModel& m = *model_;
  const int L = options_.model.n_layer;
  // Training passes record their layers' times; evaluation passes leave them.
  const bool timed = with_backward && layer_times_.forward_s.size() == static_cast<size_t>(L) + 2;
  auto add = [&](size_t i, double s) {
    if (timed) layer_times_.forward_s[i] += s;
  };
  Stopwatch clock;
  states_->begin_micro(with_backward);
  ZT_ASSIGN_OR_RETURN(void* emb, layer_params(kEmbeddingLayer));
  m.bind_layer(kEmbeddingLayer, emb, nullptr);
  ZT_RETURN_IF_ERROR(m.forward_embedding(mb.tokens, options_.micro_batch, step_seq_));
  drop_layer_params(kEmbeddingLayer);
  add(0, clock.seconds());
  for (int l = 0; l < L; ++l) {
    clock.restart();
    ZT_ASSIGN_OR_RETURN(void* p, layer_params(l));
    m.bind_layer(l, p, nullptr);
    ZT_RETURN_IF_ERROR(m.forward_block(l));
    drop_layer_params(l);
    add(static_cast<size_t>(l) + 1, clock.seconds());
  }
  clock.restart();
  ZT_ASSIGN_OR_RETURN(void* lnf, layer_params(L));
  m.bind_layer(L, lnf, nullptr);
  ZT_ASSIGN_OR_RETURN(void* head, layer_params(kEmbeddingLayer));  // the tied LM head
  m.bind_layer(kEmbeddingLayer, head, nullptr);
  ZT_RETURN_IF_ERROR(m.forward_head());
  if (!with_backward) {  // otherwise ln_f and the head stay held for backward_head
    drop_layer_params(L);
    drop_layer_params(kEmbeddingLayer);
  }
  add(static_cast<size_t>(L) + 1, clock.seconds());
  return Status::OK();
}

// Runs after forward_pass(with_backward = true), with the LM head still bound.
Status Trainer::backward_pass(const MicroBatch& mb, float dloss) {
  GptModel& m = *model_;
  const int L = options_.model.n_layer;
  std::vector<double>& t = layer_times_.backward_s;
  Stopwatch clock;
  float* g_lnf = reducer_->acquire_layer(L);
  float* g_emb = reducer_->acquire_layer(kEmbeddingLayer);
  // ln_f's and the head's parameters are the ones forward_pass bound (under ZeRO-3 still held).
  m.bind_layer(L, m.bound_params(L), g_lnf);
  m.bind_layer(kEmbeddingLayer, m.bound_params(kEmbeddingLayer), g_emb);
  ZT_RETURN_IF_ERROR(m.backward_head(mb.targets, dloss));
  reducer_->layer_done(L);
  drop_layer_params(L);
  drop_layer_params(kEmbeddingLayer);
  t.back() += clock.seconds();
  for (int l = L - 1; l >= 0; --l) {
    clock.restart();
    ZT_ASSIGN_OR_RETURN(void* p, layer_params(l));
    m.bind_layer(l, p, reducer_->acquire_layer(l));
    ZT_RETURN_IF_ERROR(m.backward_block(l));
    reducer_->layer_done(l);
    drop_layer_params(l);
    t[static_cast<size_t>(l) + 1] += clock.seconds();
  }
  clock.restart();
  m.bind_layer(kEmbeddingLayer, nullptr, g_emb);  // the embedding backward needs no parameters
  m.backward_embedding(mb.tokens);
  reducer_->layer_done(kEmbeddingLayer);
  t[0] += clock.seconds();
  clock.restart();
  const Status reduced = reducer_->end_micro();
  layer_times_.reduce_wait_s += clock.seconds();
  return reduced;
}

Status Trainer::run_micro_batches(const std::vector<MicroBatch>& mbs, int B, int T, float dloss, StepStats* stats) {
  for (size_t i = 0; i < mbs.size(); ++i) {
    const MicroBatch& mb = mbs[i];
    reducer_->begin_micro(i + 1 == mbs.size());
    ZT_RETURN_IF_ERROR(prepare_micro(i, B, T));
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(forward_pass(mb, /*with_backward=*/true));
    Stopwatch loss_clock;
    ZT_RETURN_IF_ERROR(model_->loss_into(mb.targets, staging_->loss_slot(i)));
    layer_times_.forward_s.back() += loss_clock.seconds();
    stats->forward_s += sw.seconds();
    sw.restart();
    ZT_RETURN_IF_ERROR(backward_pass(mb, dloss));
    stats->backward_s += sw.seconds();
  }
  return Status::OK();
}

}  // namespace zt
