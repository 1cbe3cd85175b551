// GptModel: construction, binding, validation, the embeddings and the head. The
// transformer blocks are in gpt_block.cc.
#include "nn/gpt_model.h"

#include <algorithm>
#include <string>

#include "core/check.h"
#include "nn/gpt_model_impl.h"
#include "nn/tp/tp_mappings.h"
#include "nn/tp/vocab_parallel.h"

namespace zt {

namespace {

GptModelOptions whole_model(int max_batch, int max_seq) {
  GptModelOptions o;
  o.max_batch = max_batch;
  o.max_seq = max_seq;
  return o;
}

VocabSlice vocab_slice(const GptConfig& c, const GptLayout& lay) {
  const int Vl = c.padded_vocab() / lay.tp_size;
  return VocabSlice{lay.tp_rank * Vl, Vl, c.vocab_size};
}

template <typename A>
const ActivationOps<A>& activation_ops(const Backend& b) {
  if constexpr (std::is_same_v<A, float>) {
    return b.ops();
  } else {
    ZT_CHECK(b.half_ops() != nullptr, "backend %s has no 16-bit activation kernels", b.describe().c_str());
    return *b.half_ops();
  }
}

}  // namespace

Status GptModel::check_supported(const GptConfig& config, const GptModelOptions& options) {
  ZT_RETURN_IF_ERROR(options.layout.validate(config));
  const Backend& backend = backend_or_cpu(options.backend);
  const bool has_flash = backend.compute_dtype() == DType::kF32
                             ? backend.ops().flash_attention_forward != nullptr
                             : backend.half_ops() != nullptr && backend.half_ops()->flash_attention_forward != nullptr;
  if (options.flash_attention && !has_flash) {
    return Status::Unimplemented("/training/attention: \"flash\" is the CPU kernel; the backend " + backend.describe() +
                                 " picks its own attention (on CUDA, flash where it serves: ZT_CUDA_ATTENTION)");
  }
  if (!config.moe.enabled()) return Status::OK();
  const Backend& b = backend_or_cpu(options.backend);
  const std::string why = "model.moe: MoE blocks are not built for ";
  if (b.moe_ops() == nullptr) return Status::Unimplemented(why + "the backend " + b.describe() + " (no MoE kernels)");
  return Status::OK();
}

std::unique_ptr<GptModel> GptModel::create(const GptConfig& config, const GptModelOptions& options) {
  if (backend_or_cpu(options.backend).compute_dtype() == DType::kF32) {
    return std::make_unique<GptModelImpl<float>>(config, options);
  }
  return std::make_unique<GptModelImpl<half_t>>(config, options);
}

std::unique_ptr<GptModel> GptModel::create(const GptConfig& config, int max_batch, int max_seq) {
  return create(config, whole_model(max_batch, max_seq));
}

GptModel::GptModel(const GptConfig& config, const GptModelOptions& options)
    : config_(config),
      options_(options),
      backend_(backend_or_cpu(options.backend)),
      table_(build_gpt_param_table(config, options.layout)) {
  ZT_CHECK(config.validate().ok(), "invalid GptConfig: %s", config.validate().to_string().c_str());
  const Status lay = options.layout.validate(config);
  ZT_CHECK(lay.ok(), "invalid layout: %s", lay.to_string().c_str());
  part_ = options.layout.chunk(config, 0);
  ZT_CHECK(options.max_batch > 0 && options.max_seq > 0 && options.max_seq * options.layout.sp_size <= config.n_positions,
           "bad activation shape %d x %d", options.max_batch, options.max_seq);
  ZT_CHECK(options.layout.tp_size == 1 || (options.tp != nullptr && options.tp->size() == options.layout.tp_size &&
                                           options.tp->rank() == options.layout.tp_rank),
           "tensor-parallel group does not match the layout");
  ZT_CHECK(options.layout.ep_size == 1 || (options.ep != nullptr && options.ep->size() == options.layout.ep_size &&
                                           options.ep->rank() == options.layout.ep_rank),
           "expert-parallel group does not match the layout");
  ZT_CHECK(options.layout.sp_size == 1 || (options.sp != nullptr && options.sp->size() == options.layout.sp_size &&
                                           options.sp->rank() == options.layout.sp_rank),
           "sequence-parallel group does not match the layout");
  ZT_CHECK(options.slots >= 1, "at least one activation slot");
  const Status supported = check_supported(config, options);
  ZT_CHECK(supported.ok(), "%s", supported.to_string().c_str());
}

StatusOr<LossSum> GptModel::loss(const int32_t* targets) {
  if (loss_out_.empty()) {
    ZT_ASSIGN_OR_RETURN(loss_out_, backend_.allocate(4, DType::kF32, "the loss read-back (two doubles)"));
  }
  ZT_RETURN_IF_ERROR(loss_into(targets, loss_out_.as<double>()));
  double out[2];
  backend_.copy_to_host(out, loss_out_.as<double>(), sizeof(out));
  return LossSum{out[0], static_cast<int64_t>(out[1])};
}

Status GptModel::validate_batch(const int32_t* tokens, const int32_t* targets, int B, int T) const {
  if (B <= 0 || B > options_.max_batch || T <= 0 || T > options_.max_seq) {
    return Status::InvalidArgument("batch of " + std::to_string(B) + " x " + std::to_string(T) +
                                   " tokens does not fit the model's allocation of " +
                                   std::to_string(options_.max_batch) + " x " + std::to_string(options_.max_seq));
  }
  const int64_t n = static_cast<int64_t>(B) * T;
  for (int64_t i = 0; i < n; ++i) {
    if (tokens != nullptr && (tokens[i] < 0 || tokens[i] >= config_.vocab_size)) {
      return Status::InvalidArgument("input token " + std::to_string(tokens[i]) + " at position " +
                                     std::to_string(i) + " is outside the vocabulary [0, " +
                                     std::to_string(config_.vocab_size) + ")");
    }
    if (targets != nullptr && (targets[i] < -1 || targets[i] >= config_.vocab_size)) {
      return Status::InvalidArgument("target token " + std::to_string(targets[i]) + " at position " +
                                     std::to_string(i) + " is neither -1 (ignore) nor in [0, " +
                                     std::to_string(config_.vocab_size) + ")");
    }
  }
  return Status::OK();
}

Status GptModel::set_routes(std::vector<BlockRoute> routes, int B, int T) {
  const bool any = std::any_of(routes.begin(), routes.end(), [](const BlockRoute& r) { return !r.whole(); });
  if (any && !options_.block_routing) return Status::FailedPrecondition("this model was built without block routing");
  if (!routes.empty() && routes.size() != static_cast<size_t>(config_.n_layer)) {
    return Status::InvalidArgument("block routes: " + std::to_string(routes.size()) + " for " +
                                   std::to_string(config_.n_layer) + " blocks");
  }
  for (size_t l = 0; l < routes.size(); ++l) {
    const BlockRoute& r = routes[l];
    const std::string where = "block " + std::to_string(l) + "'s route: ";
    if (r.kept < 0 || r.kept > T || (r.skip && r.kept > 0)) return Status::InvalidArgument(where + "bad kept count");
    if (!r.whole() && config_.moe_block(static_cast<int>(l))) {
      return Status::Unimplemented(where + "layer drop and random-LTD do not route MoE blocks yet");
    }
    if (r.scale != 1.0f && (options_.layout.tp_size > 1 || !(r.scale > 0.0f) || r.skip)) {
      return Status::InvalidArgument(where + "a branch scale needs a running block, a positive scale and tp = 1");
    }
    if (r.kept == 0) continue;
    if (r.positions.size() != static_cast<size_t>(B) * static_cast<size_t>(r.kept)) {
      return Status::InvalidArgument(where + "expected " + std::to_string(B) + " x " + std::to_string(r.kept) + " positions");
    }
    for (size_t i = 0; i < r.positions.size(); ++i) {
      const bool first = i % static_cast<size_t>(r.kept) == 0;
      if (r.positions[i] < 0 || r.positions[i] >= T || (!first && r.positions[i] <= r.positions[i - 1])) {
        return Status::InvalidArgument(where + "positions must ascend within [0, " + std::to_string(T) + ")");
      }
    }
  }
  if (routes_.size() != static_cast<size_t>(options_.slots)) routes_.resize(static_cast<size_t>(options_.slots));
  routes_[static_cast<size_t>(slot_)] = std::move(routes);
  return Status::OK();
}

const BlockRoute* GptModel::route(int layer) const {
  if (routes_.size() <= static_cast<size_t>(slot_)) return nullptr;
  const std::vector<BlockRoute>& r = routes_[static_cast<size_t>(slot_)];
  if (r.empty() || r[static_cast<size_t>(layer)].whole()) return nullptr;
  return &r[static_cast<size_t>(layer)];
}

void GptModel::set_moe_noise_key(uint64_t key) {
  moe_noise_keys_.resize(static_cast<size_t>(options_.slots), 0);
  moe_noise_keys_[static_cast<size_t>(slot_)] = key;
}

void GptModel::set_slot(int slot, int chunk) {
  ZT_CHECK(slot >= 0 && slot < options_.slots, "slot %d of %d", slot, options_.slots);
  ZT_CHECK(chunk >= 0 && chunk < options_.layout.chunk_count(), "chunk %d of %d", chunk, options_.layout.chunk_count());
  slot_ = slot;
  part_ = options_.layout.chunk(config_, chunk);
}

Status GptModel::forward(const int32_t* tokens, int B, int T) {
  ZT_RETURN_IF_ERROR(forward_embedding(tokens, B, T));
  for (int l = 0; l < config_.n_layer; ++l) ZT_RETURN_IF_ERROR(forward_block(l));
  return forward_head();
}

Status GptModel::backward(const int32_t* tokens, const int32_t* targets, float dloss) {
  ZT_RETURN_IF_ERROR(backward_head(targets, dloss));
  for (int l = config_.n_layer - 1; l >= 0; --l) ZT_RETURN_IF_ERROR(backward_block(l));
  backward_embedding(tokens);
  return Status::OK();
}

void GptModel::begin_stage(int B, int T) {
  ZT_CHECK(B > 0 && B <= options_.max_batch && T > 0 && T <= options_.max_seq, "batch %d x %d exceeds allocation",
           B, T);
  B_ = B;
  T_ = T;
}

template <typename A>
GptModelImpl<A>::GptModelImpl(const GptConfig& config, const GptModelOptions& options)
    : GptModel(config, options), k_(activation_ops<A>(backend_)), f32_(backend_.ops()) {
  ArenaShape shape;
  shape.max_batch = options.max_batch;
  shape.max_seq = options.max_seq;
  shape.slots = options.slots;
  shape.checkpoint = options.checkpoint;
  shape.partition = options.partition_activations;
  shape.stash = options.stash != nullptr;
  shape.stash_ahead = shape.stash && options.stash->fills_ahead();
  shape.routing = options.block_routing;
  shape.flash = options.flash_attention;
  shape.shared_head = options.shared_head;
  arena_ = GptActivationArenaT<A>::allocate(config, options.layout, shape, backend_);
  w_.blocks.resize(static_cast<size_t>(config.n_layer));
  dw_.blocks.resize(static_cast<size_t>(config.n_layer));
  if (config.rotary()) {
    f32_.rope_table(arena_.scratch.freqs, options.max_seq * options.layout.sp_size, config.head_size(),
                    config.rope_inv_freq().data());
  }
  moe_ = backend_.moe_ops();
  gates_.assign(static_cast<size_t>(options.slots), std::vector<MoeGateResult>(static_cast<size_t>(config.n_layer)));
  exchanges_.assign(static_cast<size_t>(options.slots), std::vector<MoeExchange>(static_cast<size_t>(config.n_layer)));
}

template <typename A>
void GptModelImpl<A>::bind(void* params, float* grads) {
  w_ = bind_gpt_weights(config_, table_, static_cast<A*>(params));
  dw_ = bind_gpt_weights(config_, table_, grads);
}

template <typename A>
void GptModelImpl<A>::bind_layer(int layer, void* params_at, float* grads_at) {
  bind_gpt_layer(config_, table_, layer, static_cast<A*>(params_at), &w_);
  bind_gpt_layer(config_, table_, layer, grads_at, &dw_);
}

template <typename A>
void* GptModelImpl<A>::bound_params(int layer) const {
  // Each layer's first tensor: the embedding, a block's norm1 weight, the final norm, the tied copy.
  if (layer == kEmbeddingLayer) return w_.embed;
  if (layer == tied_head_layer(config_)) return w_.lm_head;
  if (layer == config_.n_layer) return w_.norm_f_w;
  return w_.blocks[static_cast<size_t>(layer)].norm1_w;
}

template <typename A>
const A* GptModelImpl<A>::block_input(int layer) const {
  if (layer == part_.begin) return slot().encoded;  // the chunk's input
  return slot().blocks[static_cast<size_t>(layer - 1)].output;
}

template <typename A>
void GptModelImpl<A>::logits_row(int64_t row, float* out) const {
  const int Vl = config_.padded_vocab() / options_.layout.tp_size;
  k_.to_f32(out, slot().logits + row * Vl, Vl);
}

template <typename A>
Status GptModelImpl<A>::forward_embedding(const int32_t* tokens, int B, int T) {
  ZT_CHECK(part_.embedding, "this chunk does not hold the embeddings");
  begin_stage(B, T);
  if (!tp()) {  // learned positions are added here (null for rotary ones), from this rank's first
    const A* positions = w_.positions == nullptr ? nullptr : w_.positions + static_cast<size_t>(seq_offset()) * config_.n_embd;
    k_.encoder_forward(slot().encoded, tokens, w_.embed, positions, B, T, config_.n_embd);
    return Status::OK();
  }
  return vocab_parallel_embedding_forward(k_, options_.tp, slot().encoded, arena_.scratch.tp_partial, tokens, w_.embed,
                                          w_.positions, B, T, config_.n_embd, vocab_slice(config_, options_.layout));
}

template <typename A>
Status GptModelImpl<A>::forward_head() {
  ZT_CHECK(part_.head, "this chunk does not hold the head");
  const int C = config_.n_embd, Vl = config_.padded_vocab() / options_.layout.tp_size;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  GptActivationsT<A>& a = slot();
  norm_forward(a.norm_f, a.norm_f_mean, a.norm_f_rstd, block_input(config_.n_layer), w_.norm_f_w, w_.norm_f_b, BT);
  copy_to_tp_forward();
  k_.linear_forward(a.logits, a.norm_f, w_.lm_head, nullptr, nullptr, BT, C, Vl);  // this rank's vocabulary
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::loss_into(const int32_t* targets, double* out) {
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  GptActivationsT<A>& a = slot();
  if (!tp()) {
    k_.crossentropy_forward(a.losses, a.xent_stats, a.logits, targets, BT, config_.vocab_size, config_.padded_vocab());
  } else {
    ZT_RETURN_IF_ERROR(vocab_parallel_xent_forward(k_, f32_, options_.tp, a.losses, a.xent_stats,
                                                   arena_.scratch.tp_rows, arena_.scratch.tp_row_sums, a.logits,
                                                   targets, BT, vocab_slice(config_, options_.layout)));
  }
  f32_.loss_sum(out, a.losses, targets, BT);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::backward_head(const int32_t* targets, float dloss) {
  const int C = config_.n_embd, Vl = config_.padded_vocab() / options_.layout.tp_size;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  GptActivationsT<A>& a = slot();
  GptScratchT<A>& s = arena_.scratch;
  A* dlogits = a.logits;  // in place
  if (!tp()) {
    k_.crossentropy_backward(dlogits, a.logits, a.xent_stats, targets, dloss, BT, config_.vocab_size, Vl);
  } else {
    k_.vocab_xent_backward(dlogits, a.logits, a.xent_stats, targets, dloss, BT, vocab_slice(config_, options_.layout));
  }
  backend_.zero(s.dresidual, sizeof(A) * static_cast<size_t>(BT) * C);
  ZT_RETURN_IF_ERROR(column_parallel_backward(s.dnorm, dw_.lm_head, nullptr, dlogits, a.norm_f, w_.lm_head, BT, C, Vl));
  norm_backward(s.dresidual, dw_.norm_f_w, dw_.norm_f_b, s.dnorm, block_input(config_.n_layer), w_.norm_f_w,
                a.norm_f_mean, a.norm_f_rstd, BT);
  return Status::OK();
}

template <typename A>
void GptModelImpl<A>::backward_embedding(const int32_t* tokens) {
  ZT_CHECK(part_.embedding, "this chunk does not hold the embeddings");
  if (!tp()) {
    float* dpositions = dw_.positions == nullptr ? nullptr : dw_.positions + static_cast<size_t>(seq_offset()) * config_.n_embd;
    k_.encoder_backward(dw_.embed, dpositions, arena_.scratch.dresidual, tokens, B_, T_, config_.n_embd);
  } else {
    k_.vocab_embedding_backward(dw_.embed, dw_.positions, arena_.scratch.dresidual, tokens, B_, T_, config_.n_embd,
                                vocab_slice(config_, options_.layout));
  }
}

template class GptModelImpl<float>;
template class GptModelImpl<half_t>;

}  // namespace zt
