// The MLP of an MoE block (nn/moe_config.h), forward and backward, in fp32 (with 16-bit
// compute, on exact fp32 copies of the block's input, weights and output gradient, its
// output and input gradient rounded once to the compute dtype):
//   logits = norm2 @ router^T (the table's linear, no bias)
//   routing: the logits cross to the host, the gate (kernels/moe_gate.h) chooses each
//            token's experts, slots and weights, and the choices cross back to the arena
//            as rows of the compact layout (kernels/moe_ops.h MoeCompact: each expert's
//            kept rows contiguous, nothing padded)
//   routed = combine(experts(dispatch(norm2)))      (the backend's MoeOps, each expert on its rows)
//   y = routed, or mix(routed, dense MLP(norm2), logits) with a dense MLP beside the
//       experts (PR-MoE's residual, a shared expert: nn/moe_config.h)
//   output = res_attn + y
// Backward, from s.dresidual = dL/d(output): combine, experts and dispatch backward give
// the norm2 input gradient through the experts; the weights' gradient crosses to the host,
// where the gate's backward adds the balance loss (DeepSpeed's l_aux of this layer, or
// HF's over every MoE block of the micro-batch) and gives dlogits; the router's backward
// adds its input gradient (in fp32, then one sum). The host keeps each slot's routing per
// block (gates_) from forward to backward; a recompute routes again from the same logits
// and gets the same choices (the gate is deterministic, and its noise is drawn from the
// slot's key and the block). With expert parallelism (layout.ep_size > 1) the experts run
// on their owners' ranks: the dispatched rows travel there and back by all-to-all
// (nn/moe_exchange.h), and the exchange's layout is kept per slot and block (exchanges_).
#include <functional>
#include <string>

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/rng.h"
#include "nn/gpt_model_impl.h"
#include "nn/moe_exchange.h"

namespace zt {

namespace {

// What the MoE table's calls for one block take: the routing in backend memory as the
// compact layout's slots, the layout itself (host), this rank's experts' weights and
// gradients.
struct MoeCall {
  MoeSlots slots;
  MoeCompact layout;
  MoeLocalExperts experts;
};

template <typename A>
MoeCall moe_call(const MoeOps* ops, ProcessGroup* ep, const GptConfig& c, const MoeGateResult& r,
                 const BlockActivationsT<A>& a, int64_t N, const BlockWeightsT<float>& w,
                 const BlockWeightsT<float>* dw, const std::function<MoeExpertWeights(int)>& widen) {
  const int E = c.moe.num_experts, k = c.moe.k();
  MoeCall call;
  call.layout = moe_compact(MoeSlots{r.expert.data(), r.location.data(), N, k, E, r.capacity});
  call.slots = MoeSlots{a.moe_expert, a.moe_location, N, k, 1, call.layout.rows()};
  MoeLocalExperts& x = call.experts;
  x.ops = ops;
  x.ep = ep;
  x.local = static_cast<int>(w.experts.size());
  x.C = c.n_embd;
  x.I = c.expert_width();
  x.swiglu = c.swiglu();
  x.widen = widen;
  for (size_t j = 0; j < w.experts.size(); ++j) {
    const ExpertWeightsT<float>& e = w.experts[j];
    x.weights.push_back({e.in_w, e.in_b, e.up_w, e.out_w, e.out_b});
    if (dw == nullptr) continue;
    const ExpertWeightsT<float>& g = dw->experts[j];
    x.grads.push_back({g.in_w, g.in_b, g.up_w, g.out_w, g.out_b});
  }
  return call;
}

// The element count of the tensor starting at arena element `offset` (the table's tensors
// are in offset order).
size_t numel_at(const ParamTable& table, size_t offset) {
  const std::vector<TensorSpec>& specs = table.specs();
  const auto it = std::lower_bound(specs.begin(), specs.end(), offset,
                                   [](const TensorSpec& t, size_t at) { return t.offset < at; });
  ZT_CHECK(it != specs.end() && it->offset == offset, "no tensor starts at element %zu", offset);
  return it->numel;
}

// Block l's draws for N tokens: uniform in (0, 1) and standard Gumbel -log(-log(u)), each
// array its own stream of Rng(key, l), only where the gate's options use it.
MoeGateNoise moe_noise(const MoeGateOptions& o, uint64_t key, int l, int64_t N, int E) {
  const MoeNoiseNeeds needs = moe_gate_noise_needs(o);
  MoeGateNoise noise;
  auto draw = [&](std::vector<float>* out, uint64_t stream, bool gumbel) {
    Rng rng(key * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(l) * 2 + stream);
    out->resize(static_cast<size_t>(N * E));
    for (float& v : *out) {
      const double u = std::max(rng.uniform(), 1e-12);
      v = static_cast<float>(gumbel ? -std::log(-std::log(u)) : u);
    }
  };
  if (needs.uniform) draw(&noise.uniform, 0, false);
  if (needs.gumbel) draw(&noise.gumbel, 1, true);
  return noise;
}

// The dense MLP beside the experts is the experts' kernel with one expert that every
// token reaches (capacity N, all N rows filled).
MoeExpertShape shared_shape(const GptConfig& c, int64_t N) {
  return MoeExpertShape{1, N, c.n_embd, c.shared_width(), c.swiglu()};
}

MoeExpertWeights shared_weights(const BlockWeightsT<float>& w) {
  return {w.shared.in_w, w.shared.in_b, w.shared.up_w, w.shared.out_w, w.shared.out_b};
}

// The block's MLP output: the routed output alone, or mixed with the dense MLP beside
// the experts (into y). x: the block's norm2 output in fp32.
template <typename A>
const float* shared_forward(const MoeOps& moe, const ActivationOps<float>& k, const GptConfig& c,
                            const BlockWeightsT<float>& w, const BlockActivationsT<A>& a, const float* x, float* y,
                            int64_t N) {
  if (!c.moe.has_shared()) return a.moe_routed;
  const MoeMix mix = c.moe.mix();
  const int nl = moe_mix_logits(mix);
  moe.experts_forward(a.moe_sh_out, {a.moe_sh_in, a.moe_sh_up, a.moe_sh_act}, x, {shared_weights(w)}, {N},
                      shared_shape(c, N));
  if (nl > 0) k.linear_forward(a.moe_mix_logits, x, w.shared_gate_w, w.shared_gate_b, nullptr, N, c.n_embd, nl);
  moe.mix_forward(y, a.moe_routed, a.moe_sh_out, a.moe_mix_logits, N, c.n_embd, mix);
  return y;
}

// The dense MLP's backward from s.moe_ddense and the mixing logits' from s.moe_dmix: their
// weight gradients (+=), and their input gradients added into dx (fp32).
template <typename A>
void shared_backward(const MoeOps& moe, const KernelOps& f32, const GptConfig& c, const BlockWeightsT<float>& w,
                     const BlockWeightsT<float>& dw, const BlockActivationsT<A>& a, const float* x, float* dx,
                     GptScratchT<A>& s, int64_t N) {
  const int C = c.n_embd, nl = moe_mix_logits(c.moe.mix());
  const ExpertWeightsT<float>& g = dw.shared;
  moe.experts_backward(s.moe_dx, {{g.in_w, g.in_b, g.up_w, g.out_w, g.out_b}}, s.moe_ddense,
                       {a.moe_sh_in, a.moe_sh_up, a.moe_sh_act}, x, {shared_weights(w)}, {N}, shared_shape(c, N),
                       s.moe_experts);
  f32.accumulate(dx, s.moe_dx, N * C);
  if (nl == 0) return;
  f32.linear_backward(s.moe_dx, dw.shared_gate_w, dw.shared_gate_b, s.moe_dmix, x, w.shared_gate_w, N, C, nl);
  f32.accumulate(dx, s.moe_dx, N * C);
}

}  // namespace

// The gate's balance-loss gradient to each expert's gates, for block l (moe_aux_weight_
// is d(objective) / d(balance loss)).
template <typename A>
std::vector<double> GptModelImpl<A>::moe_dgate(int l, int64_t N) const {
  const MoeConfig& m = config_.moe;
  const MoeGateResult& r = gates_[static_cast<size_t>(slot_)][static_cast<size_t>(l)];
  if (moe_aux_weight_ == 0.0f) return {};
  if (m.gate.routing == MoeRouting::kDeepSpeed) return deepspeed_aux_dgate(r, m.gate, N, m.num_experts, moe_aux_weight_);
  return mixtral_balance(slot_routings(), N, m.num_experts, m.k(), moe_aux_weight_).dgate;
}

template <typename A>
std::vector<const MoeGateResult*> GptModelImpl<A>::slot_routings() const {
  std::vector<const MoeGateResult*> out;
  for (int l : options_.layout.blocks(config_)) {
    if (config_.moe_block(l)) out.push_back(&gates_[static_cast<size_t>(slot_)][static_cast<size_t>(l)]);
  }
  return out;
}

template <typename A>
double GptModelImpl<A>::moe_aux_loss() const {
  const MoeConfig& m = config_.moe;
  if (!m.enabled()) return 0.0;
  const int64_t N = static_cast<int64_t>(B_) * T_;
  if (m.gate.routing == MoeRouting::kMixtral) return mixtral_balance(slot_routings(), N, m.num_experts, m.k(), 1.0).aux;
  double sum = 0.0;
  for (const MoeGateResult* r : slot_routings()) sum += r->l_aux;
  return sum;
}

// fp32 compute reads the block's own input and weights; 16-bit compute widens them into
// the scratch (exact), computes in fp32 and rounds the output once: res_attn + y.
template <typename A>
Status GptModelImpl<A>::moe_forward(int l, const BlockActivationsT<A>& a, int64_t N) {
  const int C = config_.n_embd;
  if constexpr (std::is_same_v<A, float>) {
    ZT_ASSIGN_OR_RETURN(const float* y, moe_mlp_forward(l, a, a.norm2, w_.blocks[static_cast<size_t>(l)], N));
    k_.bias_residual(a.output, a.res_attn, y, nullptr, N, C);
  } else {
    GptScratchT<A>& s = arena_.scratch;
    k_.to_f32(s.moe_x32, a.norm2, N * C);
    const BlockWeightsT<float> w32 = widened_moe(l);
    ZT_ASSIGN_OR_RETURN(const float* y, moe_mlp_forward(l, a, s.moe_x32, w32, N));
    k_.to_f32(s.moe_dy32, a.res_attn, N * C);
    f32_.accumulate(s.moe_dy32, y, N * C);
    k_.from_f32(a.output, s.moe_dy32, N * C);
  }
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::moe_backward(int l, const BlockActivationsT<A>& a, int64_t N) {
  GptScratchT<A>& s = arena_.scratch;
  if constexpr (std::is_same_v<A, float>) {
    return moe_mlp_backward(l, a, a.norm2, w_.blocks[static_cast<size_t>(l)], s.dresidual, s.dnorm, N);
  } else {
    const int C = config_.n_embd;
    k_.to_f32(s.moe_x32, a.norm2, N * C);
    k_.to_f32(s.moe_dy32, s.dresidual, N * C);
    const BlockWeightsT<float> w32 = widened_moe(l);
    ZT_RETURN_IF_ERROR(moe_mlp_backward(l, a, s.moe_x32, w32, s.moe_dy32, s.moe_dx32, N));
    k_.from_f32(s.dnorm, s.moe_dx32, N * C);
    return Status::OK();
  }
}

// 16-bit compute: fp32 copies in the scratch (moe_w32) of block l's router, dense MLP beside
// the experts and its gate; the experts are widened one at a time after them
// (expert_widener_, for MoeLocalExperts::widen). Exact.
template <typename A>
BlockWeightsT<float> GptModelImpl<A>::widened_moe(int l) {
  const BlockWeightsT<A>& h = w_.blocks[static_cast<size_t>(l)];
  const A* base = static_cast<const A*>(bound_params(l));
  const size_t begin = table_.layer_range(l).begin;
  auto widen_into = [this, base, begin](float** at, const A* p) -> float* {
    if (p == nullptr) return nullptr;
    const size_t n = numel_at(table_, begin + static_cast<size_t>(p - base));
    float* out = *at;
    k_.to_f32(out, p, static_cast<int64_t>(n));
    *at += n;
    return out;
  };
  float* at = arena_.scratch.moe_w32;
  BlockWeightsT<float> w;
  w.router_w = widen_into(&at, h.router_w);
  w.shared = {widen_into(&at, h.shared.in_w), widen_into(&at, h.shared.in_b), widen_into(&at, h.shared.up_w),
              widen_into(&at, h.shared.out_w), widen_into(&at, h.shared.out_b)};
  w.shared_gate_w = widen_into(&at, h.shared_gate_w);
  w.shared_gate_b = widen_into(&at, h.shared_gate_b);
  w.experts.resize(h.experts.size());  // null: widened one at a time
  float* const slot = at;
  expert_widener_ = [&h, widen_into, slot](int j) {
    const ExpertWeightsT<A>& e = h.experts[static_cast<size_t>(j)];
    float* at_j = slot;
    return MoeExpertWeights{widen_into(&at_j, e.in_w), widen_into(&at_j, e.in_b), widen_into(&at_j, e.up_w),
                            widen_into(&at_j, e.out_w), widen_into(&at_j, e.out_b)};
  };
  return w;
}

// The routed (and mixed) output y (fp32) of block l from its norm2 output x.
template <typename A>
StatusOr<const float*> GptModelImpl<A>::moe_mlp_forward(int l, const BlockActivationsT<A>& a, const float* x,
                                                        const BlockWeightsT<float>& w, int64_t N) {
  const MoeConfig& m = config_.moe;
  const int C = config_.n_embd, E = m.num_experts, k = m.k();
  f32_.linear_forward(a.moe_logits, x, w.router_w, nullptr, nullptr, N, C, E);
  std::vector<float> logits(static_cast<size_t>(N * E));
  backend_.copy_to_host(logits.data(), a.moe_logits, logits.size() * sizeof(float));
  const uint64_t key = moe_noise_keys_.empty() ? 0 : moe_noise_keys_[static_cast<size_t>(slot_)];
  const MoeGateOptions gate = m.gate_for(moe_eval_);
  StatusOr<MoeGateResult> routed = moe_gate_forward(logits.data(), N, E, gate, moe_noise(gate, key, l, N, E));
  if (!routed.ok()) return Status::InvalidArgument("block " + std::to_string(l) + ": " + routed.status().message());
  MoeGateResult& r = gates_[static_cast<size_t>(slot_)][static_cast<size_t>(l)] = std::move(routed).value();
  const MoeCall call = moe_call(moe_, options_.ep, config_, r, a, N, w, nullptr, expert_widener_);
  const size_t nk = static_cast<size_t>(N * k);
  backend_.copy_from_host(a.moe_expert, call.layout.slot_expert.data(), nk * sizeof(int32_t));
  backend_.copy_from_host(a.moe_location, call.layout.slot_row.data(), nk * sizeof(int32_t));
  backend_.copy_from_host(a.moe_weight, r.weight.data(), nk * sizeof(float));
  const MoeExpertActs acts{a.moe_h_in, a.moe_h_up, a.moe_act};
  GptScratchT<A>& s = arena_.scratch;
  if (options_.layout.ep_size == 1) {
    moe_->dispatch(a.moe_buf, x, call.slots, C);
    moe_local_experts_forward(call.experts, a.moe_out, acts, a.moe_buf, call.layout.fill, call.layout.offset);
  } else {  // dispatched here, computed by the owners into a.moe_buf's rows, returned to a.moe_out
    moe_->dispatch(s.moe_dout, x, call.slots, C);
    ZT_ASSIGN_OR_RETURN(exchanges_[static_cast<size_t>(slot_)][static_cast<size_t>(l)],
                        moe_ep_forward(call.experts, s.moe_dout, call.layout, a.moe_buf, acts, s.moe_dbuf, a.moe_out));
  }
  moe_->combine(a.moe_routed, a.moe_out, a.moe_weight, call.slots, C);
  return shared_forward(*moe_, f32_, config_, w, a, x, s.moe_y, N);
}

// From dy = dL/d(y) (fp32): the weights' gradients (+=) and the input gradient dx (assigned).
template <typename A>
Status GptModelImpl<A>::moe_mlp_backward(int l, const BlockActivationsT<A>& a, const float* x,
                                         const BlockWeightsT<float>& w, const float* dy, float* dx, int64_t N) {
  const MoeConfig& m = config_.moe;
  const int C = config_.n_embd, E = m.num_experts, k = m.k();
  const BlockWeightsT<float>& dw = dw_.blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  const MoeGateResult& r = gates_[static_cast<size_t>(slot_)][static_cast<size_t>(l)];
  const MoeCall call = moe_call(moe_, options_.ep, config_, r, a, N, w, &dw, expert_widener_);
  if (m.has_shared()) {  // the routed output's gradient through the mixing
    moe_->mix_backward(s.moe_dmoe, s.moe_ddense, s.moe_dmix, dy, a.moe_routed, a.moe_sh_out, a.moe_mix_logits, N, C,
                       m.mix());
  }
  moe_->combine_backward(s.moe_dout, s.moe_dweight, m.has_shared() ? s.moe_dmoe : dy, a.moe_out, a.moe_weight,
                         call.slots, C);
  const MoeExpertActs acts{a.moe_h_in, a.moe_h_up, a.moe_act};
  if (options_.layout.ep_size == 1) {
    moe_local_experts_backward(call.experts, s.moe_dbuf, s.moe_dout, acts, a.moe_buf, call.layout.fill,
                               call.layout.offset, s.moe_experts);
    moe_->dispatch_backward(dx, s.moe_dbuf, call.slots, C);
  } else {  // the owners' backward; the dispatched rows' gradient returns into s.moe_dout
    const MoeExchange& ex = exchanges_[static_cast<size_t>(slot_)][static_cast<size_t>(l)];
    ZT_RETURN_IF_ERROR(moe_ep_backward(call.experts, ex, call.layout, s.moe_dout, s.moe_xchg, s.moe_dbuf, acts,
                                       a.moe_buf, s.moe_experts));
    moe_->dispatch_backward(dx, s.moe_dout, call.slots, C);
  }
  std::vector<float> dweight(static_cast<size_t>(N * k)), dlogits(static_cast<size_t>(N * E));
  backend_.copy_to_host(dweight.data(), s.moe_dweight, dweight.size() * sizeof(float));
  moe_gate_backward(dlogits.data(), r, dweight.data(), moe_dgate(l, N), N, E, m.gate);
  backend_.copy_from_host(s.moe_dlogits, dlogits.data(), dlogits.size() * sizeof(float));
  f32_.linear_backward(s.moe_dx, dw.router_w, nullptr, s.moe_dlogits, x, w.router_w, N, C, E);
  f32_.accumulate(dx, s.moe_dx, N * C);
  if (m.has_shared()) shared_backward(*moe_, f32_, config_, w, dw, a, x, dx, s, N);
  return Status::OK();
}

#define ZT_INSTANTIATE_MOE(A)                                                                        \
  template std::vector<double> GptModelImpl<A>::moe_dgate(int, int64_t) const;                       \
  template BlockWeightsT<float> GptModelImpl<A>::widened_moe(int);                                     \
  template StatusOr<const float*> GptModelImpl<A>::moe_mlp_forward(int, const BlockActivationsT<A>&, const float*, \
                                                                   const BlockWeightsT<float>&, int64_t);          \
  template Status GptModelImpl<A>::moe_mlp_backward(int, const BlockActivationsT<A>&, const float*,             \
                                                    const BlockWeightsT<float>&, const float*, float*, int64_t);  \
  template std::vector<const MoeGateResult*> GptModelImpl<A>::slot_routings() const;                 \
  template double GptModelImpl<A>::moe_aux_loss() const;                                             \
  template Status GptModelImpl<A>::moe_forward(int, const BlockActivationsT<A>&, int64_t);           \
  template Status GptModelImpl<A>::moe_backward(int, const BlockActivationsT<A>&, int64_t);
ZT_INSTANTIATE_MOE(float)
ZT_INSTANTIATE_MOE(half_t)
#undef ZT_INSTANTIATE_MOE

}  // namespace zt
