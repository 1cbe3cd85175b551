// measure_device_link (calibrate_device.h).
#include "cli/calibrate_device.h"

#ifdef ZT_HAVE_CUDA
#include "backend/cuda/cuda_device.h"
#endif

namespace zt {

#ifndef ZT_HAVE_CUDA

StatusOr<DeviceLinkCalibration> measure_device_link() {
  return Status::FailedPrecondition("this zerotrain was built without the CUDA backend");
}

#else

StatusOr<DeviceLinkCalibration> measure_device_link() {
  ZT_ASSIGN_OR_RETURN(const int n, cuda_device_count());
  if (n < 1) return Status::FailedPrecondition("no CUDA device");
  ZT_ASSIGN_OR_RETURN(const CudaDeviceInfo d, cuda_device_info(0));
  // A small GEMM (its rate is not what this is for) and 256 MiB copies, as doctor's 1 GiB
  // ones reach the same pinned rate (55 GB/s on an H200 either way).
  ZT_ASSIGN_OR_RETURN(const CudaMeasurement m, measure_cuda_device(0, 1024, size_t{256} << 20));
  DeviceLinkCalibration link;
  link.device = d.name;
  link.h2d_bytes_per_s = m.h2d_gbs * 1e9;
  link.d2h_bytes_per_s = m.d2h_gbs * 1e9;
  return link;
}

#endif

}  // namespace zt
