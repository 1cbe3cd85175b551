// Timing one kernel call; see op_timer.h.
#include "planner/op_timer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/memory_stats.h"
#include "core/threads.h"
#include "core/timer.h"

namespace zt {

namespace {

constexpr size_t kEvictBytes = size_t{128} << 20;
constexpr size_t kMaxReps = 15;

// The buffers of one timed call, in the backend's memory (a device's where it has one),
// filled from the host through the backend's copies. Small values (|x| < 0.5) so no kernel
// meets inf or NaN; 16-bit ones rounded by the host's from_f32 (a device table's casts
// take device pointers). The first allocation failure is kept, and prepare()
// returns it.
class Buffers {
 public:
  explicit Buffers(const Backend& b) : b_(b) {}
  template <typename A>
  A* values(size_t n, uint32_t seed) {
    std::vector<float> f(n);
    uint32_t s = seed * 2654435761u + 1;
    for (float& x : f) {
      s = s * 1664525u + 1013904223u;
      x = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
    }
    if constexpr (std::is_same_v<A, float>) {
      return static_cast<A*>(put(f.data(), n, DType::kF32));
    } else {
      std::vector<A> h(n);
      plain_cpu_backend(b_.compute_dtype()).half_ops()->from_f32(h.data(), f.data(), static_cast<int64_t>(n));
      return static_cast<A*>(put(h.data(), n, b_.compute_dtype()));
    }
  }
  float* zeros(size_t n) { return static_cast<float*>(put(nullptr, n, DType::kF32)); }
  // A call the timed one needs first (a backward's forward, the rope table), run by
  // prepare() once every buffer is allocated: never on a null buffer.
  void before(std::function<void()> f) { first_.push_back(std::move(f)); }
  Status prepare() {
    if (!error_.ok()) return error_;
    for (const auto& f : first_) f();
    return Status::OK();
  }
  int32_t* tokens(size_t n, int32_t below) {
    std::vector<int32_t> t(n);
    for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919u + 13u) % static_cast<size_t>(below));
    return static_cast<int32_t*>(put(t.data(), n, DType::kF32));  // 4-byte elements
  }

 private:
  void* put(const void* host, size_t n, DType dt) {
    auto a = b_.allocate(std::max<size_t>(n, 1), dt, "a calibration kernel's buffer");
    if (!a.ok()) {
      if (error_.ok()) error_ = a.status();
      return nullptr;
    }
    if (host != nullptr) b_.copy_from_host(a->as<void>(), host, n * dtype_size(dt));
    arenas_.push_back(std::move(a).value());
    return arenas_.back().as<void>();
  }
  const Backend& b_;
  std::vector<Arena> arenas_;
  std::vector<std::function<void()>> first_;
  Status error_;
};

// The call itself as a closure over its buffers (in `buf`, which outlives it).
template <typename A>
std::function<void()> bind_call(const ActivationOps<A>& k, const OpCall& op, Buffers& buf) {
  const int64_t a = op.dims[0], b = op.dims[1], c = op.dims[2], d = op.dims[3];
  auto V = [&](size_t n, uint32_t seed) { return buf.values<A>(n, seed); };
  auto F = [&](size_t n) { return buf.zeros(n); };
  const size_t A0 = static_cast<size_t>(a);
  switch (op.kind) {
    case OpKind::kLinearForward: {
      auto x = V(A0 * b, 1), w = V(static_cast<size_t>(b * c), 2), y = V(A0 * c, 3);
      return [=, &k] { k.linear_forward(y, x, w, nullptr, nullptr, a, int(b), int(c)); };
    }
    case OpKind::kLinearBackward: {
      auto x = V(A0 * b, 1), w = V(static_cast<size_t>(b * c), 2), dy = V(A0 * c, 3), dx = V(A0 * b, 4);
      auto dw = F(static_cast<size_t>(b * c)), db = F(static_cast<size_t>(c));
      return [=, &k] { k.linear_backward(dx, dw, db, dy, x, w, a, int(b), int(c)); };
    }
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward: {
      const size_t BT = A0 * b;
      auto qkv = V(BT * 3 * c, 1), atty = V(BT * c, 2), att = V(A0 * d * b * b, 3), dqkv = V(BT * 3 * c, 4);
      if (op.kind == OpKind::kAttentionForward) {
        return [=, &k] { k.attention_forward(atty, att, qkv, int(a), int(b), int(c), int(d)); };
      }
      buf.before([=, &k] { k.attention_forward(atty, att, qkv, int(a), int(b), int(c), int(d)); });
      return [=, &k] { k.attention_backward(dqkv, atty, qkv, att, int(a), int(b), int(c), int(d)); };
    }
    case OpKind::kLayerNormForward:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormForward:
    case OpKind::kRmsNormBackward: {
      auto x = V(A0 * b, 1), y = V(A0 * b, 2), dy = V(A0 * b, 3), w = V(size_t(b), 4), bias = V(size_t(b), 5);
      auto mean = F(A0), rstd = F(A0), dw = F(size_t(b)), dbias = F(size_t(b));
      switch (op.kind) {
        case OpKind::kLayerNormForward:
          return [=, &k] { k.layernorm_forward(y, mean, rstd, x, w, bias, a, int(b)); };
        case OpKind::kLayerNormBackward:
          buf.before([=, &k] { k.layernorm_forward(y, mean, rstd, x, w, bias, a, int(b)); });
          return [=, &k] {
            k.layernorm_backward(y, dw, dbias, dy, x, w, mean, rstd, a, int(b));
          };
        case OpKind::kRmsNormForward:
          return [=, &k] { k.rmsnorm_forward(y, rstd, x, w, a, int(b), 1e-5f); };
        default:
          buf.before([=, &k] { k.rmsnorm_forward(y, rstd, x, w, a, int(b), 1e-5f); });
          return [=, &k] { k.rmsnorm_backward(y, dw, dy, x, w, rstd, a, int(b)); };
      }
    }
    default:
      return {};
  }
}

// The rest of the kinds (elementwise, embedding, loss, optimizer).
template <typename A>
std::function<void()> bind_other(const ActivationOps<A>& k, const KernelOps& f32, const OpCall& op,
                                 Buffers& buf) {
  const int64_t a = op.dims[0], b = op.dims[1], c = op.dims[2], d = op.dims[3];
  auto V = [&](size_t n, uint32_t seed) { return buf.values<A>(n, seed); };
  auto F = [&](size_t n) { return buf.zeros(n); };
  const size_t A0 = static_cast<size_t>(a);
  switch (op.kind) {
    case OpKind::kGeluForward:
    case OpKind::kGeluBackward: {
      auto x = V(A0, 1), y = V(A0, 2);
      if (op.kind == OpKind::kGeluForward) return [=, &k] { k.gelu_forward(y, x, a); };
      return [=, &k] { k.gelu_backward(y, x, y, a); };
    }
    case OpKind::kSwigluForward:
    case OpKind::kSwigluBackward: {
      auto g = V(A0, 1), u = V(A0, 2), y = V(A0, 3), dg = V(A0, 4), du = V(A0, 5);
      if (op.kind == OpKind::kSwigluForward) return [=, &k] { k.swiglu_forward(y, g, u, a); };
      return [=, &k] { k.swiglu_backward(dg, du, y, g, u, a); };
    }
    case OpKind::kRopeForward:
    case OpKind::kRopeBackward: {
      auto freqs = F(static_cast<size_t>(b * d));
      buf.before([=, &f32] {
        const std::vector<double> inv(static_cast<size_t>(d / 2), 0.01);
        f32.rope_table(freqs, int(b), int(d), inv.data());
      });
      auto x = V(A0 * b * c * d, 1);
      if (op.kind == OpKind::kRopeForward) {
        return [=, &k] { k.rope_forward(x, x, freqs, int(a), int(b), int(c), int(d), 0); };
      }
      return [=, &k] { k.rope_backward(x, x, freqs, int(a), int(b), int(c), int(d), 0); };
    }
    case OpKind::kEncoderForward:
    case OpKind::kEncoderBackward: {
      constexpr int kRows = 4096;  // embedding rows the tokens index
      auto tok = buf.tokens(A0 * b, kRows);
      auto wte = V(size_t(kRows) * c, 1), wpe = V(static_cast<size_t>(b * c), 2), y = V(A0 * b * c, 3);
      auto dwte = F(size_t(kRows) * c), dwpe = F(static_cast<size_t>(b * c));
      if (op.kind == OpKind::kEncoderForward) {
        return [=, &k] { k.encoder_forward(y, tok, wte, wpe, int(a), int(b), int(c)); };
      }
      return [=, &k] { k.encoder_backward(dwte, dwpe, y, tok, int(a), int(b), int(c)); };
    }
    case OpKind::kXentForward:
    case OpKind::kXentBackward: {
      auto tok = buf.tokens(A0, int32_t(b));
      auto logits = V(A0 * b, 1), dlogits = V(A0 * b, 2);
      auto losses = F(A0), stats = F(2 * A0);
      buf.before([=, &k] { k.crossentropy_forward(losses, stats, logits, tok, a, int(b), int(b)); });
      if (op.kind == OpKind::kXentForward) {
        return [=, &k] { k.crossentropy_forward(losses, stats, logits, tok, a, int(b), int(b)); };
      }
      return [=, &k] {
        k.crossentropy_backward(dlogits, logits, stats, tok, 1e-3f, a, int(b), int(b));
      };
    }
    case OpKind::kAdamW: {  // the update with the compute copy it writes (none in fp32)
      auto p = F(A0), g = F(A0), m = F(A0), v = F(A0);
      auto copy = V(std::is_same_v<A, float> ? 0 : A0, 3);
      AdamWArgs args;
      args.neg_step_size = -1e-3f;
      return [=, &k] {
        A* dst = std::is_same_v<A, float> ? reinterpret_cast<A*>(p) : copy;
        k.adamw_step_copy(dst, p, g, m, v, a, args);
      };
    }
    default:
      return {};
  }
}

template <typename A>
std::function<void()> bind(const ActivationOps<A>& k, const KernelOps& f32, const OpCall& op, Buffers& buf) {
  std::function<void()> f = bind_call<A>(k, op, buf);
  return f ? f : bind_other<A>(k, f32, op, buf);
}

// In training a kernel's inputs were written long before (forward activations, the
// gradient arena), so each timed call starts with the caches holding other data: every
// cache line of a 128 MiB buffer is written first (AMD Zen 4's last-level cache is 32 MiB
// per CCD; a 2-core slice of an Intel Sapphire Rapids gets a share of its 105 MiB).
void evict_caches() {
  static std::vector<char> junk(kEvictBytes);
  static char v = 0;
  ++v;
  parallel_for(static_cast<int64_t>(junk.size() / 4096), [&](int64_t i) {
    for (size_t j = 0; j < 4096; j += 64) junk[static_cast<size_t>(i) * 4096 + j] = v;
  });
}

// A device's caches between calls: `bytes` of its memory zeroed on its stream (without the
// memory for it, the calls are timed with what the caches hold).
void evict_device(const Backend& b, size_t bytes) {
  static const Backend* owner = nullptr;
  static Arena* junk = nullptr;  // never freed: a device's memory must not be released after its context at exit
  bytes = std::max<size_t>(bytes / 4, 1) * 4;  // whole floats, so the size check below matches
  if (owner != &b || (junk != nullptr && junk->bytes() != bytes)) {
    auto a = b.allocate(bytes / 4, DType::kF32, "the calibration's cache flush");
    junk = a.ok() ? new Arena(std::move(a).value()) : nullptr;
    owner = &b;
  }
  if (junk != nullptr) b.zero(junk->as<void>(), junk->bytes());
  b.synchronize();
}

// The warm call (first touch of the buffers, the GEMM library's set-up), and the resident
// memory it needed above what the process held before it.
double warm_call(const Backend& backend, const std::function<void()>& call) {
  const bool measured = backend.host() && reset_resident_peak();
  const size_t before = measured ? current_rss_bytes() : 0;
  call();
  backend.synchronize();
  const size_t peak = measured ? resident_peak_bytes() : 0;
  return peak > before ? static_cast<double>(peak - before) : 0.0;
}

}  // namespace

StatusOr<OpMeasurement> measure_op(const Backend& backend, const OpCall& op, const OpTimerOptions& options) {
  const DType dt = backend.compute_dtype();
  Buffers buf(backend);
  std::function<void()> call =
      dt == DType::kF32 ? bind<float>(backend.ops(), backend.ops(), op, buf)
                        : bind<half_t>(*backend.half_ops(), backend.ops(), op, buf);
  if (!call) return Status::InvalidArgument("no kernel to time for " + op.key());
  ZT_RETURN_IF_ERROR(buf.prepare());
  OpMeasurement m;
  m.workspace_bytes = warm_call(backend, call);
  std::vector<double> t;
  double total = 0.0;
  while (static_cast<int>(t.size()) < options.min_reps || total < options.min_seconds) {
    backend.host() ? evict_caches() : evict_device(backend, options.device_evict_bytes);
    if (options.sync) options.sync();
    const double start = now_seconds();
    call();
    backend.synchronize();  // a device's kernels run on its stream: the call ends when they do
    t.push_back(now_seconds() - start);
    total += t.back();
    if (t.size() >= kMaxReps) break;
  }
  std::sort(t.begin(), t.end());
  m.seconds = t[t.size() / 2];
  return m;
}

StatusOr<double> time_op(const Backend& backend, const OpCall& op, const OpTimerOptions& options) {
  ZT_ASSIGN_OR_RETURN(const OpMeasurement m, measure_op(backend, op, options));
  return m.seconds;
}

}  // namespace zt
