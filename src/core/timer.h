// Wall-clock helpers for step timing and benchmarks (steady clock, seconds as double).
#pragma once

#include <chrono>

namespace zt {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Measures elapsed seconds since construction or the last restart().
class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  void restart() { start_ = now_seconds(); }
  double seconds() const { return now_seconds() - start_; }

 private:
  double start_;
};

}  // namespace zt
