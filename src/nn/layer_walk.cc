// The layer walk: forward and backward of one micro-batch, layer by layer; see layer_walk.h.
#include "nn/layer_walk.h"

#include "core/timer.h"

namespace zt {

namespace {

constexpr int kNoLayer = -2;

void add_time(std::vector<double>* slots, size_t i, double s) {
  if (slots != nullptr && i < slots->size()) (*slots)[i] += s;
}

}  // namespace

int LayerWalk::head_matrix_layer() const {
  const GptLayout& lay = model_.layout();
  if (lay.embedding) return kEmbeddingLayer;  // the tied LM head (bound again when untied: a no-op)
  if (lay.head && model_.config().tied_head()) return tied_head_layer(model_.config());
  return kNoLayer;
}

Status LayerWalk::forward(const MicroBatch& mb, int B, int T, bool with_backward, LayerParamSource& params,
                          LayerTimes* times) {
  std::vector<double>* t = times != nullptr ? &times->forward_s : nullptr;
  Stopwatch clock;
  params.begin_micro(with_backward);
  model_.set_moe_eval(!with_backward);
  const ChunkPart& part = model_.part();  // the layout's blocks, or on an interleaved rank the current chunk's
  if (part.embedding) {
    ZT_ASSIGN_OR_RETURN(void* emb, params.layer_params(kEmbeddingLayer));
    model_.bind_layer(kEmbeddingLayer, emb, nullptr);
    ZT_RETURN_IF_ERROR(model_.forward_embedding(mb.tokens, B, T));
    params.release(kEmbeddingLayer);
  } else {
    model_.begin_stage(B, T);  // the input was received into stage_input()
  }
  add_time(t, 0, clock.seconds());
  ZT_RETURN_IF_ERROR(forward_blocks(params, times));
  if (!part.head) return Status::OK();
  return forward_head(with_backward, params, times);
}

Status LayerWalk::forward_blocks(LayerParamSource& params, LayerTimes* times) {
  const ChunkPart& part = model_.part();
  for (int l = part.begin; l < part.end; ++l) {
    Stopwatch clock;
    ZT_ASSIGN_OR_RETURN(void* p, params.layer_params(l));
    model_.bind_layer(l, p, nullptr);
    ZT_RETURN_IF_ERROR(model_.forward_block(l));
    params.release(l);
    add_time(times != nullptr ? &times->forward_s : nullptr, static_cast<size_t>(l) + 1, clock.seconds());
  }
  return Status::OK();
}

Status LayerWalk::forward_head(bool with_backward, LayerParamSource& params, LayerTimes* times) {
  const int L = model_.config().n_layer, hm = head_matrix_layer();
  Stopwatch clock;
  ZT_ASSIGN_OR_RETURN(void* lnf, params.layer_params(L));
  model_.bind_layer(L, lnf, nullptr);
  if (hm != kNoLayer) {
    ZT_ASSIGN_OR_RETURN(void* head, params.layer_params(hm));
    model_.bind_layer(hm, head, nullptr);
  }
  ZT_RETURN_IF_ERROR(model_.forward_head());
  if (!with_backward) {  // otherwise ln_f and the head stay held for backward_head
    params.release(L);
    if (hm != kNoLayer) params.release(hm);
  }
  add_time(times != nullptr ? &times->forward_s : nullptr, static_cast<size_t>(L) + 1, clock.seconds());
  return Status::OK();
}

// ln_f's and the head matrix's parameters are the ones forward bound (under ZeRO-3 still held).
Status LayerWalk::backward_head(const MicroBatch& mb, float dloss, LayerParamSource& params, LayerGradSink& grads) {
  const int L = model_.config().n_layer, hm = head_matrix_layer();
  float* g_lnf = grads.acquire_layer(L);
  float* g_hm = hm != kNoLayer ? grads.acquire_layer(hm) : nullptr;
  model_.bind_layer(L, model_.bound_params(L), g_lnf);
  if (hm != kNoLayer) model_.bind_layer(hm, model_.bound_params(hm), g_hm);
  ZT_RETURN_IF_ERROR(model_.backward_head(mb.targets, dloss));
  grads.layer_done(L);
  if (hm != kNoLayer && hm != kEmbeddingLayer) grads.layer_done(hm);  // a tied copy is complete here
  params.release(L);
  if (hm != kNoLayer) params.release(hm);
  return Status::OK();
}

Status LayerWalk::backward(const MicroBatch& mb, float dloss, LayerParamSource& params, LayerGradSink& grads,
                           LayerTimes* times) {
  const ChunkPart& part = model_.part();
  std::vector<double>* t = times != nullptr ? &times->backward_s : nullptr;
  const int L = model_.config().n_layer;
  Stopwatch clock;
  if (part.head) ZT_RETURN_IF_ERROR(backward_head(mb, dloss, params, grads));
  add_time(t, static_cast<size_t>(L) + 1, clock.seconds());
  for (int l = part.end - 1; l >= part.begin; --l) {
    clock.restart();
    ZT_ASSIGN_OR_RETURN(void* p, params.layer_params(l));
    model_.bind_layer(l, p, grads.acquire_layer(l));
    ZT_RETURN_IF_ERROR(model_.backward_block(l));
    grads.layer_done(l);
    params.release(l);
    add_time(t, static_cast<size_t>(l) + 1, clock.seconds());
  }
  if (!part.embedding) return Status::OK();
  clock.restart();
  // The embedding backward needs no parameters; its gradient (with a tied head's part) is
  // complete only after it.
  model_.bind_layer(kEmbeddingLayer, nullptr, grads.acquire_layer(kEmbeddingLayer));
  model_.backward_embedding(mb.tokens);
  grads.layer_done(kEmbeddingLayer);
  add_time(t, 0, clock.seconds());
  return Status::OK();
}

}  // namespace zt
