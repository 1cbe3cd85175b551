// Routed blocks (block_route.h): a skipped block passes its input through; a block with
// kept tokens gathers those rows of each sequence into the routing scratch, runs the
// ordinary block on them as a (B, kept) batch (so attention is causal among them in
// position order), and scatters its output rows back over a copy of the input. Backward
// gathers the output gradient of the kept rows, runs the block's backward on them (a
// checkpointed block recomputes on the gathered input first), and scatters their input
// gradient back; the other rows' gradient passes through unchanged. Rows move with the
// backend's copy, so every backend runs it.
#include "core/check.h"
#include "nn/gpt_model_impl.h"

namespace zt {

// out[b, j] = in[b, positions[b, j]] (rows of `width` elements; in has T_ rows a sequence).
template <typename A>
void GptModelImpl<A>::gather_rows(A* out, const A* in, const BlockRoute& r, int T, size_t width) const {
  for (int b = 0; b < B_; ++b) {
    for (int j = 0; j < r.kept; ++j) {
      const size_t pos = static_cast<size_t>(r.positions[static_cast<size_t>(b) * r.kept + j]);
      backend_.copy(out + (static_cast<size_t>(b) * r.kept + j) * width, in + (static_cast<size_t>(b) * T + pos) * width,
                    width * sizeof(A));
    }
  }
}

// out[b, positions[b, j]] = in[b, j].
template <typename A>
void GptModelImpl<A>::scatter_rows(A* out, const A* in, const BlockRoute& r, int T, size_t width) const {
  for (int b = 0; b < B_; ++b) {
    for (int j = 0; j < r.kept; ++j) {
      const size_t pos = static_cast<size_t>(r.positions[static_cast<size_t>(b) * r.kept + j]);
      backend_.copy(out + (static_cast<size_t>(b) * T + pos) * width, in + (static_cast<size_t>(b) * r.kept + j) * width,
                    width * sizeof(A));
    }
  }
}

// Rotary positions: the RoPE table rows of the kept positions, per sequence (rope() reads them).
template <typename A>
void GptModelImpl<A>::fill_route_freqs(const BlockRoute& r) {
  if (!config_.rotary()) return;
  const size_t hd = static_cast<size_t>(config_.head_size());
  GptScratchT<A>& s = arena_.scratch;
  for (size_t i = 0; i < r.positions.size(); ++i) {
    backend_.copy(s.route_freqs + i * hd, s.freqs + static_cast<size_t>(r.positions[i]) * hd, hd * sizeof(float));
  }
}

template <typename A>
void GptModelImpl<A>::rope(A* x, int NH, bool backward) {
  const int HD = config_.head_size();
  auto call = [&](A* p, const float* freqs, int B, int pos0) {
    if (backward) {
      k_.rope_backward(p, p, freqs, B, T_, NH, HD, pos0);
    } else {
      k_.rope_forward(p, p, freqs, B, T_, NH, HD, pos0);
    }
  };
  if (active_route_ == nullptr) return call(x, arena_.scratch.freqs, B_, seq_offset());  // this rank's positions
  const size_t rows = static_cast<size_t>(T_);  // T_ is the kept count while a route is active
  for (int b = 0; b < B_; ++b) {
    call(x + static_cast<size_t>(b) * rows * NH * HD, arena_.scratch.route_freqs + static_cast<size_t>(b) * rows * HD, 1, 0);
  }
}

template <typename A>
Status GptModelImpl<A>::routed_forward(int l, const BlockRoute& r, const A* res_in, const BlockActivationsT<A>& a) {
  const size_t C = static_cast<size_t>(config_.n_embd), all = static_cast<size_t>(B_) * T_ * C;
  if (a.saved_input_part != nullptr || a.stashed_input) {
    return Status::FailedPrecondition("block " + std::to_string(l) +
                                      ": routed blocks cannot keep partitioned or disk-stashed checkpoints");
  }
  if (r.skip) {
    backend_.copy(a.output, res_in, all * sizeof(A));
    return Status::OK();
  }
  GptScratchT<A>& s = arena_.scratch;
  const int T = T_;
  gather_rows(s.route_rows, res_in, r, T, C);
  fill_route_freqs(r);
  T_ = r.kept;
  active_route_ = &r;
  const Status st = block_forward(l, s.route_rows, a);
  active_route_ = nullptr;
  backend_.copy(s.route_rows, a.output, static_cast<size_t>(B_) * r.kept * C * sizeof(A));
  T_ = T;
  ZT_RETURN_IF_ERROR(st);
  backend_.copy(a.output, res_in, all * sizeof(A));
  scatter_rows(a.output, s.route_rows, r, T, C);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::routed_backward(int l, const BlockRoute& r) {
  if (r.skip) return Status::OK();  // the output gradient is the input gradient; no parameter gradient
  const size_t C = static_cast<size_t>(config_.n_embd);
  GptScratchT<A>& s = arena_.scratch;
  const BlockActivationsT<A>* a = &slot().blocks[static_cast<size_t>(l)];
  const int T = T_;
  gather_rows(s.route_rows, block_input(l), r, T, C);
  gather_rows(s.route_grad, s.dresidual, r, T, C);
  fill_route_freqs(r);
  T_ = r.kept;
  active_route_ = &r;
  Status st = Status::OK();
  if (a->checkpointed) {
    st = block_forward(l, s.route_rows, s.recompute);
    a = &s.recompute;
  }
  std::swap(s.dresidual, s.route_grad);  // the block's backward works on s.dresidual
  if (st.ok()) st = block_backward(l, *a, s.route_rows);
  std::swap(s.dresidual, s.route_grad);
  active_route_ = nullptr;
  T_ = T;
  ZT_RETURN_IF_ERROR(st);
  scatter_rows(s.dresidual, s.route_grad, r, T, C);
  return Status::OK();
}

#define ZT_INSTANTIATE_ROUTES(A)                                                                               \
  template void GptModelImpl<A>::gather_rows(A*, const A*, const BlockRoute&, int, size_t) const;              \
  template void GptModelImpl<A>::scatter_rows(A*, const A*, const BlockRoute&, int, size_t) const;             \
  template void GptModelImpl<A>::fill_route_freqs(const BlockRoute&);                                          \
  template void GptModelImpl<A>::rope(A*, int, bool);                                                          \
  template Status GptModelImpl<A>::routed_forward(int, const BlockRoute&, const A*, const BlockActivationsT<A>&); \
  template Status GptModelImpl<A>::routed_backward(int, const BlockRoute&);
ZT_INSTANTIATE_ROUTES(float)
ZT_INSTANTIATE_ROUTES(half_t)
#undef ZT_INSTANTIATE_ROUTES

}  // namespace zt
