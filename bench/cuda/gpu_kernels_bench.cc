// zerotrain's CUDA kernels at GPT-2 124M's sizes (B=16, T=1024, bf16), timed with CUDA
// events (median of 20 after 3 warm-ups, inputs from fill_uniform, never zeros):
// - the five GEMM shapes of a block and the LM head through cuBLASLt: forward (bias
//   fused), backward input, backward weights (fp32 += ), as ms and TFLOP/s;
// - the memory-bound kernels (AdamW over 124M parameters, GELU, casts, the sum of
//   squares, the bias gradient) as ms and GB/s against a device-to-device copy measured
//   in the same run;
// - LayerNorm, the classifier (cross-entropy over 50,304 classes) and attention (B=16,
//   12 heads, causal; TFLOP/s counted as if not causal): flash (its backward with dQ
//   recomputing dS, then reading the stored dS unless ZT_CUDA_ATTENTION=flash-recompute),
//   then phase 1's materialized.
// Prints one line per kernel and a last JSON line. bench/cuda/gpu_kernels.sh runs it with
// PyTorch's equivalents on the same card.
// usage: gpu_kernels_bench [--repeats N] [--only gemms|memory|layers]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/cuda/attention_env.h"
#include "backend/cuda/cuda_device.h"
#include "kernels/cuda/activation.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/bias_grad.h"
#include "kernels/cuda/crossentropy.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gemm_lt.h"
#include "kernels/cuda/norms.h"
#include "kernels/cuda/optimizer.h"

namespace {

using namespace zt;

int g_repeats = 20;
cudaStream_t g_stream = nullptr;
std::string g_json;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_kernels_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "gpu_kernels_bench: %s\n", s.to_string().c_str());
    std::exit(1);
  }
}

void* device(size_t bytes, uint64_t seed, DType t = DType::kBF16) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  cuda::fill_uniform(t, p, static_cast<int64_t>(bytes / dtype_size(t)), seed, 0.5f, g_stream);
  return p;
}

// Median milliseconds of f over g_repeats runs (events around each), after 3 warm-ups.
double time_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> ms;
  for (int r = 0; r < g_repeats; ++r) {
    check(cudaEventRecord(a, g_stream), "record");
    f();
    check(cudaEventRecord(b, g_stream), "record");
    check(cudaEventSynchronize(b), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void record(const std::string& name, double ms, const char* unit, double rate) {
  std::printf("%-34s %9.4f ms  %8.1f %s\n", name.c_str(), ms, rate, unit);
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%s\"%s\": %.5f", g_json.empty() ? "" : ", ", name.c_str(), ms);
  g_json += buf;
}

void bench_gemms(cuda::LtGemm& lt) {
  const int64_t N = 16 * 1024;
  struct Shape {
    const char* name;
    int C, OC;
  };
  const Shape shapes[] = {{"qkv", 768, 2304}, {"attn_proj", 768, 768}, {"fc", 768, 3072},
                          {"fc_proj", 3072, 768}, {"lm_head", 768, 50304}};
  for (const Shape& s : shapes) {
    void* x = device(2 * N * s.C, 1);
    void* w = device(2 * size_t{1} * s.OC * s.C, 2);
    void* b = device(2 * size_t{1} * s.OC, 3);
    void* y = device(2 * N * s.OC, 4);
    void* dx = device(2 * N * s.C, 5);
    float* dw = static_cast<float*>(device(4 * size_t{1} * s.OC * s.C, 6, DType::kF32));
    const double flops = 2.0 * N * s.C * s.OC;
    const double f = time_ms([&] { check(cuda::linear_forward(lt, DType::kBF16, y, x, w, b, nullptr, N, s.C, s.OC, g_stream)); });
    record(std::string(s.name) + "_fwd", f, "TFLOP/s", flops / f / 1e9);
    const double bi = time_ms([&] {
      check(cuda::linear_backward_input(lt, DType::kBF16, DType::kBF16, dx, y, w, N, s.C, s.OC, g_stream));
    });
    record(std::string(s.name) + "_bwd_input", bi, "TFLOP/s", flops / bi / 1e9);
    const double bw = time_ms([&] { check(cuda::linear_backward_weights(lt, DType::kBF16, dw, y, x, N, s.C, s.OC, g_stream)); });
    record(std::string(s.name) + "_bwd_weight", bw, "TFLOP/s", flops / bw / 1e9);
    for (void* p : {x, w, b, y, dx, static_cast<void*>(dw)}) cudaFree(p);
  }
}

void bench_memory_bound() {
  const int64_t P = 124'439'808, A = 16 * 1024 * 3072;
  const size_t copy = size_t{1} << 30;
  void* src = device(copy, 7, DType::kF32);
  void* dst = device(copy, 8, DType::kF32);
  const double c = time_ms([&] { check(cudaMemcpyAsync(dst, src, copy, cudaMemcpyDeviceToDevice, g_stream), "copy"); });
  record("d2d_copy_1GiB", c, "GB/s", 2.0 * copy / c / 1e6);
  cudaFree(src);
  cudaFree(dst);
  float* p = static_cast<float*>(device(4 * P, 9, DType::kF32));
  float* g = static_cast<float*>(device(4 * P, 10, DType::kF32));
  float* m = static_cast<float*>(device(4 * P, 11, DType::kF32));
  float* v = static_cast<float*>(device(4 * P, 12, DType::kF32));
  AdamWArgs args;
  const double ad = time_ms([&] { cuda::adamw_step(p, g, m, v, P, args, g_stream); });
  record("adamw_124M", ad, "GB/s", 28.0 * P / ad / 1e6);
  half_t* h = static_cast<half_t*>(device(2 * P, 13));
  const double cast = time_ms([&] { cuda::cast_from_f32(DType::kBF16, h, p, P, g_stream); });
  record("cast_f32_bf16_124M", cast, "GB/s", 6.0 * P / cast / 1e6);
  double* ws = static_cast<double*>(device(8 * cuda::sum_squares_workspace_doubles(P) + 8, 14, DType::kF32));
  const double ss = time_ms([&] { cuda::sum_squares(ws, g, P, {16, true}, ws + 1, g_stream); });
  record("sum_squares_124M", ss, "GB/s", 4.0 * P / ss / 1e6);
  void* act = device(2 * A, 15);
  void* out = device(2 * A, 16);
  const double gf = time_ms([&] { cuda::gelu_forward(DType::kBF16, out, act, A, g_stream); });
  record("gelu_fwd_bf16", gf, "GB/s", 4.0 * A / gf / 1e6);
  const double gb = time_ms([&] { cuda::gelu_backward(DType::kBF16, out, act, out, A, g_stream); });
  record("gelu_bwd_bf16", gb, "GB/s", 6.0 * A / gb / 1e6);
  float* db = static_cast<float*>(device(4 * 3072, 17, DType::kF32));
  float* bws = static_cast<float*>(device(4 * cuda::bias_grad_workspace_floats(16 * 1024, 3072), 18, DType::kF32));
  const double bg = time_ms([&] { cuda::bias_grad(DType::kBF16, db, act, 16 * 1024, 3072, bws, g_stream); });
  record("bias_grad_fc_bf16", bg, "GB/s", 2.0 * A / bg / 1e6);
  for (void* q : {static_cast<void*>(p), static_cast<void*>(g), static_cast<void*>(m), static_cast<void*>(v),
                  static_cast<void*>(h), static_cast<void*>(ws), act, out, static_cast<void*>(db), static_cast<void*>(bws)}) {
    cudaFree(q);
  }
}

// LayerNorm, the classifier and attention at the same sizes.
void bench_layers(cuda::LtGemm& lt) {
  const int64_t N = 16 * 1024;
  const int C = 768, V = 50257, Vp = 50304, B = 16, T = 1024, NH = 12;
  const cuda::CpuOrder order{16, true};
  void* x = device(2 * N * C, 20);
  void* y = device(2 * N * C, 21);
  // attention first: its rows are the ones phase 2 is about
  void* qkv = device(2 * N * 3 * C, 29);
  void* att = device(2 * size_t{1} * B * NH * T * T, 30);
  void* aws = device(cuda::attention_workspace_bytes(DType::kBF16, B, T, C, NH), 31, DType::kF32);
  void* dqkv = device(2 * N * 3 * C, 32);
  const double aflops = 4.0 * B * NH * T * static_cast<double>(T) * (C / NH);
  const double af = time_ms([&] { check(cuda::flash_attention_forward(DType::kBF16, y, att, qkv, B, T, C, NH, g_stream)); });
  record("attention_fwd_bf16", af, "TFLOP/s", aflops / af / 1e9);
  const double ar = time_ms([&] {  // dQ recomputing dS, as where att has no room for it
    check(cuda::flash_attention_backward(DType::kBF16, dqkv, y, qkv, att, B, T, C, NH, aws, g_stream, false));
  });
  record("attention_bwd_recompute_bf16", ar, "TFLOP/s", 2.0 * aflops / ar / 1e9);
  if (cuda::flash_stores_ds()) {  // the training step's way; not under ZT_CUDA_ATTENTION=flash-recompute
    const double ab = time_ms([&] {
      check(cuda::flash_attention_backward(DType::kBF16, dqkv, y, qkv, att, B, T, C, NH, aws, g_stream));
    });
    record("attention_bwd_bf16", ab, "TFLOP/s", 2.0 * aflops / ab / 1e9);
  }
  const double mf = time_ms([&] { check(cuda::attention_forward(lt, DType::kBF16, y, att, qkv, B, T, C, NH, aws, g_stream)); });
  record("attention_materialized_fwd_bf16", mf, "TFLOP/s", aflops / mf / 1e9);
  const double mb = time_ms([&] {
    check(cuda::attention_backward(lt, DType::kBF16, dqkv, y, qkv, att, B, T, C, NH, aws, g_stream));
  });
  record("attention_materialized_bwd_bf16", mb, "TFLOP/s", 2.0 * aflops / mb / 1e9);
  void* w = device(2 * C, 22);
  void* b = device(2 * C, 23);
  float* stats = static_cast<float*>(device(12 * N, 24, DType::kF32));  // N losses | (N, 2) stats; LN: mean | rstd
  float* dwb = static_cast<float*>(device(8 * C, 25, DType::kF32));
  float* ws = static_cast<float*>(device(4 * cuda::norm_workspace_floats(N, C), 26, DType::kF32));
  const double lf = time_ms([&] { cuda::layernorm_forward(DType::kBF16, order, y, stats, stats + N, x, w, b, N, C, g_stream); });
  record("layernorm_fwd_bf16", lf, "GB/s", 4.0 * N * C / lf / 1e6);
  const double lb = time_ms([&] {
    cuda::layernorm_backward(DType::kBF16, order, y, dwb, dwb + C, x, x, w, stats, stats + N, N, C, ws, g_stream);
  });
  record("layernorm_bwd_bf16", lb, "GB/s", 8.0 * N * C / lb / 1e6);
  void* logits = device(2 * N * Vp, 27);
  int32_t* targets = static_cast<int32_t*>(device(4 * N, 28, DType::kF32));
  std::vector<int32_t> host_t(N);
  for (int64_t i = 0; i < N; ++i) host_t[i] = static_cast<int32_t>((i * 7919) % V);
  // On g_stream, after the fill device() queued there: g_stream does not wait for the legacy
  // default stream, so a plain cudaMemcpy could land before the fill and leave float bits as
  // targets (class indices past V: reads far beyond the logits, memcheck's invalid reads).
  check(cudaMemcpyAsync(targets, host_t.data(), 4 * N, cudaMemcpyHostToDevice, g_stream), "targets");
  check(cudaStreamSynchronize(g_stream), "targets");
  const double cf = time_ms([&] {
    cuda::crossentropy_forward(DType::kBF16, order, stats, stats + N, logits, targets, N, V, Vp, g_stream);
  });
  record("crossentropy_fwd_bf16", cf, "GB/s", 2.0 * N * Vp / cf / 1e6);
  const double cb = time_ms([&] {
    cuda::crossentropy_backward(DType::kBF16, order, logits, logits, stats + N, targets, 1.0f / N, N, V, Vp, g_stream);
  });
  record("crossentropy_bwd_bf16", cb, "GB/s", 4.0 * N * Vp / cb / 1e6);
  for (void* p : {x, y, w, b, static_cast<void*>(stats), static_cast<void*>(dwb), static_cast<void*>(ws), logits,
                  static_cast<void*>(targets), qkv, att, aws, dqkv}) {
    cudaFree(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;  // --only gemms|memory|layers: one group (a memory checker's run)
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0) g_repeats = std::max(1, std::atoi(argv[++i]));
    if (std::strcmp(argv[i], "--only") == 0) only = argv[++i];
  }
  const StatusOr<CudaDeviceInfo> info = cuda_device_info(0);
  if (!info.ok()) {
    std::fprintf(stderr, "gpu_kernels_bench: %s\n", info.status().message().c_str());
    return 2;
  }
  std::printf("device: %s\n", info->describe().c_str());
  check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking), "stream");
  auto lt = cuda::LtGemm::create();
  check(lt.status());
  if (only.empty() || only == "gemms") bench_gemms(**lt);
  if (only.empty() || only == "memory") bench_memory_bound();
  if (only.empty() || only == "layers") bench_layers(**lt);
  std::printf("{\"bench\": \"gpu_kernels\", \"device\": \"%s\", \"ms\": {%s}}\n", info->name.c_str(), g_json.c_str());
  return 0;
}
