// What a CUDA device is, what surrounds it, and what it measures, for the banner and
// `zerotrain doctor` (issue 28): the GPU, its driver and runtime, the versions of the
// libraries the backend loads (cuBLASLt, cuDNN, NCCL: each found or named as missing),
// the card's dense bf16 peak from its datasheet, and two measurements on the card itself:
// a bf16 GEMM's TFLOP/s through cuBLASLt and pinned host<->device copy bandwidth.
// Thread-safety: the functions may run on any thread; measure_cuda_device uses the device
// exclusively for about a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace zt {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H200"
  int sm_major = 0, sm_minor = 0;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
  int driver_version = 0;   // CUDA version the driver supports, 13000 = 13.0
  int runtime_version = 0;  // the statically linked runtime's
  size_t cublaslt_version = 0;  // 0: not loadable (cublaslt_error says why)
  std::string cublaslt_error;
  size_t cudnn_version = 0;  // 0: libcudnn.so.9 not found
  int nccl_version = 0;      // 0: libnccl.so.2 not found
  double dense_bf16_peak_tflops = 0.0;  // the datasheet's dense rate; 0 for a card not in our table

  // "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB), driver 13.0, runtime 13.0, cuBLASLt 13.1.0, cuDNN 9.19.0, NCCL 2.28.9"
  std::string describe() const;
};

struct CudaMeasurement {
  int gemm_n = 0;  // the bf16 GEMM was n x n x n
  double bf16_gemm_tflops = 0.0;
  size_t copy_bytes = 0;  // per pinned copy
  double h2d_gbs = 0.0, d2h_gbs = 0.0;
};

// The number of CUDA devices, or FailedPrecondition naming why there is none ("no CUDA
// device: CUDA driver version is insufficient for CUDA runtime version" on a machine
// without a driver).
StatusOr<int> cuda_device_count();
StatusOr<CudaDeviceInfo> cuda_device_info(int index);
// The two measurements (median of 5 timed repeats each, after a warm-up).
StatusOr<CudaMeasurement> measure_cuda_device(int index, int gemm_n = 8192, size_t copy_bytes = size_t{1} << 30);

// A version integer as "major.minor.patch" by the library's encoding.
std::string cuda_version_string(int v);   // 13000 -> "13.0"
std::string cudnn_version_string(size_t v);  // 91900 -> "9.19.0"
std::string cublaslt_version_string(size_t v);  // 130100 -> "13.1.0"
std::string nccl_version_string(int v);   // 22809 -> "2.28.9"

}  // namespace zt
