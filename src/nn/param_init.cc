// Parameter initialisation; see param_init.h. A TensorStream is one tensor's generator and
// how far it has drawn; fill_tensor resumes it, so chunked initialisation draws each
// element once.
#include "nn/param_init.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/threads.h"

namespace zt {
namespace {

uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// One tensor's stream: the generator and the global index of its next draw.
struct TensorStream {
  std::optional<Rng> rng;
  size_t next = 0;
};

// Writes the elements of tensor s that lie in `range` to out (indexed from range.begin),
// drawing s's stream from st->next to the last global element the slice needs.
void fill_tensor(const TensorSpec& s, const ParamTable& table, ElementRange range, float* out, uint64_t seed,
                 TensorStream* st) {
  const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
  if (lo >= hi) return;
  if (s.init != InitKind::kNormal) {
    std::fill(out + (lo - range.begin), out + (hi - range.begin), s.init == InitKind::kOnes ? 1.0f : 0.0f);
    return;
  }
  const int tp_rank = table.tp_rank(), tp_size = table.tp_size();
  const std::vector<int64_t>& gs = s.global_shape.empty() ? s.shape : s.global_shape;
  size_t global_numel = 1;
  for (int64_t d : gs) global_numel *= static_cast<size_t>(d);
  const size_t row = gs.size() >= 2 ? static_cast<size_t>(gs[1]) : global_numel;
  const size_t filled = s.init_rows >= 0 ? static_cast<size_t>(s.init_rows) * row : global_numel;
  // Global indices grow with local ones, so [first, stop) covers the slice's part of the range.
  const size_t first = tp_global_index(s, tp_rank, tp_size, lo - s.offset);
  const size_t stop = tp_global_index(s, tp_rank, tp_size, hi - s.offset - 1) + 1;
  if (!st->rng || st->next > first) *st = TensorStream{Rng(seed * 0x9e3779b97f4a7c15ull + name_hash(s.name)), 0};
  for (size_t g = st->next; g < stop; ++g) {
    const float v = g < filled ? static_cast<float>(st->rng->normal() * s.init_std) : 0.0f;
    size_t k;
    if (g >= first && tp_local_index(s, tp_rank, tp_size, g, &k)) out[s.offset + k - range.begin] = v;
  }
  st->next = stop;
}

void fill_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed,
                std::vector<TensorStream>* streams) {
  const auto& specs = table.specs();
  parallel_for(static_cast<int64_t>(specs.size()), [&](int64_t i) {
    fill_tensor(specs[static_cast<size_t>(i)], table, range, out, seed, &(*streams)[static_cast<size_t>(i)]);
  });
}

}  // namespace

void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed) {
  std::vector<TensorStream> streams(table.specs().size());
  fill_range(table, range, out, seed, &streams);
}

void init_params(const ParamTable& table, float* params, uint64_t seed) {
  init_params_range(table, {0, table.numel()}, params, seed);
}

void init_params_into(const Backend& backend, const ParamTable& table, ElementRange range, float* dst, uint64_t seed,
                      size_t chunk) {
  ParamInitializer(table, seed).into(backend, range, dst, chunk);
}

struct ParamInitializer::Streams {
  std::vector<TensorStream> of;
};

ParamInitializer::ParamInitializer(const ParamTable& table, uint64_t seed)
    : table_(table), seed_(seed), streams_(new Streams{std::vector<TensorStream>(table.specs().size())}) {}

ParamInitializer::~ParamInitializer() = default;

// Host memory is filled in place. Any other is filled tensor by tensor in parallel, each
// thread drawing its tensor in pieces of `chunk` floats into its own host buffer; the copies
// into the backend take turns (drawing, not copying, is the slow part).
void ParamInitializer::into(const Backend& backend, ElementRange range, float* dst, size_t chunk) {
  if (backend.host()) {
    fill_range(table_, range, dst, seed_, &streams_->of);
    return;
  }
  const auto& specs = table_.specs();
  std::mutex copying;
  parallel_for(static_cast<int64_t>(specs.size()), [&](int64_t i) {
    const TensorSpec& s = specs[static_cast<size_t>(i)];
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) return;
    std::vector<float> host(std::min(chunk, hi - lo));
    for (size_t at = lo; at < hi; at += chunk) {
      const size_t n = std::min(chunk, hi - at);
      fill_tensor(s, table_, {at, at + n}, host.data(), seed_, &streams_->of[static_cast<size_t>(i)]);
      const std::lock_guard<std::mutex> turn(copying);
      backend.copy_from_host(dst + (at - range.begin), host.data(), n * sizeof(float));
    }
  });
}

}  // namespace zt
