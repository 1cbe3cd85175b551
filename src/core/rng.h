// Deterministic random numbers, independent of the C++ standard library's
// implementation-defined distributions: the same seed gives the same stream on every
// platform. SplitMix64 seeds xoshiro256**; normals come from Box-Muller in double.
// Thread-safety: a Rng is not shared between threads; derive one per stream instead.
#pragma once

#include <cstdint>

namespace zt {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal (mean 0, std 1).
  double normal();
  // Uniform integer in [0, n); n > 0.
  uint64_t below(uint64_t n);

  // The full generator state, for checkpoints (4 words + cached normal).
  struct State {
    uint64_t s[4];
    double cached_normal;
    bool has_cached_normal;
  };
  State state() const;
  void set_state(const State& state);

 private:
  uint64_t s_[4];
  double cached_normal_ = 0.0;
  bool has_cached_normal_ = false;
};

}  // namespace zt
