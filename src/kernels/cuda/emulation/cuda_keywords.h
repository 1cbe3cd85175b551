// The first include of a translation unit that builds CUDA kernel source for the CPU
// emulation (lanes.h): it defines ZT_CUDA_EMULATION (so warp_ops.cuh, async_copy.cuh and
// launch.h take their emulated forms), takes the CUDA runtime's host headers for the types
// (dim3, uint3, float2, cudaStream_t), and then maps the CUDA keywords: __global__ and
// __device__ functions become plain ones, __shared__ arrays function-static (one block runs
// at a time), threadIdx and the other indices the emulated thread's, __syncthreads and
// __shfl_xor_sync lanes.h's, and device_math.h gives the math intrinsics. The namespace zt::cuda becomes zt::cuda_emu, so the emulated
// kernels and the real ones of libzerotrain can live in one binary.
// Invariant: included before anything else of the translation unit.
#pragma once

#define ZT_CUDA_EMULATION 1

#include <cuda_runtime_api.h>
#include <vector_functions.h>

#include <cmath>

#include "kernels/cuda/emulation/device_math.h"
#include "kernels/cuda/emulation/lanes.h"

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define threadIdx (::zt::emu::thread_idx())
#define blockIdx (::zt::emu::block_idx())
#define blockDim (::zt::emu::block_dim())
#define gridDim (::zt::emu::grid_dim())
#define __syncthreads() ::zt::emu::sync_block()
#define __shfl_xor_sync(mask, v, lanes) ::zt::emu::shfl_xor(v, lanes)
#define cuda cuda_emu
