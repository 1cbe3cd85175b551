// Parameter initialisation: the values every layout of a model starts from.
// Each tensor draws normal(0, init_std) from its own stream (xoshiro256** seeded from the
// run's seed and the tensor's name), in the row-major order of its GLOBAL shape, and keeps
// the elements of its slice; biases are zeros and norm weights ones. So every pipeline stage,
// tensor-parallel rank and ZeRO shard starts from exactly the values the whole model on
// one process would.
// Invariant: a tensor's stream is drawn once per call, from its first element to the last
// one the call needs (resumed across init_params_into's chunks), so initialising N
// parameters costs N draws whatever the chunking; tensors run in parallel.
// Thread-safety: the functions may run concurrently on different outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backend/backend.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Fills `params` (table.numel() floats) per each spec's InitKind.
void init_params(const ParamTable& table, float* params, uint64_t seed);

// The same values as init_params, but only for the elements in `range`, written to
// `out` (range.size() floats): each rank of a sharded run initialises just its shard.
void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed);

// init_params_range's values for `range`, written into `backend`'s memory at dst: in place
// where the backend's memory is the host's (backend.host()), else tensor by tensor on every
// thread, each through a host buffer of at most `chunk` floats (host code never writes a
// device's or a guarded arena directly).
inline constexpr size_t kInitChunkFloats = size_t{1} << 22;
void init_params_into(const Backend& backend, const ParamTable& table, ElementRange range, float* dst, uint64_t seed,
                      size_t chunk = kInitChunkFloats);

// init_params_into over several ranges of one arena in increasing order (a store streamed
// chunk by chunk): each tensor's stream resumes where the previous range left it. A range
// that starts before that point draws the tensor's stream again from its start (the same
// values, more draws).
class ParamInitializer {
 public:
  ParamInitializer(const ParamTable& table, uint64_t seed);
  ~ParamInitializer();
  void into(const Backend& backend, ElementRange range, float* dst, size_t chunk = kInitChunkFloats);

 private:
  struct Streams;
  const ParamTable& table_;
  uint64_t seed_;
  std::unique_ptr<Streams> streams_;
};

}  // namespace zt
