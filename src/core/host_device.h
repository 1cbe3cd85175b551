// ZT_HOST_DEVICE: marks a small function that CUDA device code calls as well as the CPU
// (nvcc compiles it for both sides, force-inlined on the device); plain `inline` in host
// builds. The one definition, for every header that shares arithmetic across devices.
#pragma once

#ifdef __CUDACC__
#define ZT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ZT_HOST_DEVICE inline
#endif
