// Helpers for the CUDA tests (zt_cuda_tests, ctest label `cuda`): the reason a test must
// skip (no GPU, no driver, no cuBLASLt), device buffers that copy to and from host
// vectors, and a stream. Every CUDA test starts with ZT_REQUIRE_CUDA(), so on a machine
// without a GPU the suite reports each test skipped with the reason.
// Header-only, tests only.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_device.h"
#include "core/check.h"
#include "core/cpu_features.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cuda/cpu_order.h"

namespace zt::testing {

// "" when a CUDA device is usable, else why not.
inline std::string cuda_skip_reason() {
  static const std::string reason = [] {
    const StatusOr<int> n = cuda_device_count();
    return n.ok() ? std::string() : n.status().message();
  }();
  return reason;
}

#define ZT_REQUIRE_CUDA()                                                       \
  do {                                                                          \
    const std::string zt_skip = ::zt::testing::cuda_skip_reason();              \
    if (!zt_skip.empty()) GTEST_SKIP() << zt_skip << " (the CUDA tests need a GPU)"; \
  } while (0)

inline void cuda_check(cudaError_t e, const char* what) {
  ZT_CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
}

// n elements of T in device memory, filled with 0xff bytes (NaN for floats) so that an
// element a kernel forgot to write is never mistaken for a result.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    cuda_check(cudaMalloc(&p_, n * sizeof(T) + 1), "cudaMalloc");
    cuda_check(cudaMemset(p_, 0xff, n * sizeof(T)), "cudaMemset");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return static_cast<T*>(p_); }
  size_t size() const { return n_; }
  void upload(const std::vector<T>& host) {
    ZT_CHECK(host.size() == n_, "upload of %zu into %zu", host.size(), n_);
    cuda_check(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download() const {
    cuda_check(cudaDeviceSynchronize(), "kernels before a download");
    std::vector<T> out(n_);
    cuda_check(cudaMemcpy(out.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return out;
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

// Every CPU ISA this host runs, with the order a CUDA kernel must follow to match it.
inline std::vector<std::pair<Isa, cuda::CpuOrder>> cpu_orders() {
  std::vector<std::pair<Isa, cuda::CpuOrder>> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (detect_isa() >= isa) out.push_back({isa, cuda::cpu_order_for(isa)});
  }
  return out;
}

// n values drawn from normal(mean, sd) by a seeded generator.
inline std::vector<float> normal_values(size_t n, uint32_t seed, float mean = 0.0f, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

// x rounded to storage t and widened back: values a 16-bit tensor can hold.
inline std::vector<float> representable(DType t, const std::vector<float>& x) {
  if (t == DType::kF32) return x;
  std::vector<half_t> h(x.size());
  std::vector<float> out(x.size());
  f32_to_half(t, h.data(), x.data(), static_cast<int64_t>(x.size()));
  half_to_f32(t, out.data(), h.data(), static_cast<int64_t>(x.size()));
  return out;
}

// A tensor in storage t (fp32, or bf16/f16 bit patterns) on the device, with the host
// floats it was made from (rounded to t, so the CPU reference sees the same values).
class DeviceValues {
 public:
  DeviceValues(DType t, const std::vector<float>& values)
      : t_(t), host_(representable(t, values)), f32_(t == DType::kF32 ? host_.size() : 1),
        half_(t == DType::kF32 ? 1 : host_.size()) {
    if (t_ == DType::kF32) {
      f32_.upload(host_);
    } else {
      std::vector<half_t> h(host_.size());
      f32_to_half(t_, h.data(), host_.data(), static_cast<int64_t>(h.size()));
      half_.upload(h);
    }
  }
  void* get() { return t_ == DType::kF32 ? static_cast<void*>(f32_.get()) : static_cast<void*>(half_.get()); }
  float* f32() { return f32_.get(); }
  const std::vector<float>& host() const { return host_; }
  // The device contents now, widened to floats.
  std::vector<float> download() const {
    if (t_ == DType::kF32) return f32_.download();
    const std::vector<half_t> h = half_.download();
    std::vector<float> out(h.size());
    half_to_f32(t_, out.data(), h.data(), static_cast<int64_t>(h.size()));
    return out;
  }

 private:
  DType t_;
  std::vector<float> host_;
  DeviceArray<float> f32_;
  DeviceArray<half_t> half_;
};

// Bitwise equality of two float vectors (NaN payloads included unless any_nan: then any
// NaN equals any NaN), with the first mismatch.
inline ::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b,
                                            bool any_nan = false) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (x != y && !(any_nan && a[i] != a[i] && b[i] != b[i])) {
      return ::testing::AssertionFailure() << "element " << i << " of " << a.size() << ": " << a[i] << " (0x" << std::hex
                                           << x << ") vs " << b[i] << " (0x" << y << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace zt::testing
