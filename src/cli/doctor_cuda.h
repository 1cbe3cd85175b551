// `zerotrain doctor`'s CUDA section: the build (with or without the CUDA backend), every
// GPU with its driver, runtime and libraries (cuBLASLt, cuDNN, NCCL), and device 0's
// measured bf16 GEMM rate against the card's dense peak and its pinned copy bandwidth.
// No GPU is a fact, not a problem (the CPU backend needs none); a GPU whose libraries
// cannot be loaded is a problem, since `--device cuda` would fail there.
// Thread-safety: run from the main thread, before any training.
#pragma once

#include <functional>
#include <string>

namespace zt {

// fact(label, text) prints one line; problem(text) adds one to the problem list.
void report_cuda(const std::function<void(const char*, const std::string&)>& fact,
                 const std::function<void(std::string)>& problem);

// How several ranks on this machine would communicate, for `nccl_version` (0: none) and
// `gpus` GPUs: NCCL with a GPU per rank, and where collectives stage through host memory
// (the slow path: no NCCL, or ranks sharing a GPU under NCCL < 2.30).
std::string describe_cuda_ranks(int nccl_version, int gpus);

}  // namespace zt
