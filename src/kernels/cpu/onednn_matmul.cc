// The oneDNN matmul primitive cache (onednn_matmul.h): one primitive per key, created under
// a lock on first use and kept for the process.
#include "kernels/cpu/onednn_matmul.h"

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/check.h"

namespace zt {

using dt = dnnl::memory::data_type;

struct OneDnnMatmul {
  MatmulKey key;
  dnnl::memory::desc a, b, c, bias, scratch;
  dnnl::matmul prim;
  std::string impl;
};

namespace {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dt type_of(MatmulType t) { return t == MatmulType::kBf16 ? dt::bf16 : dt::f32; }

// A row-major (rows, cols) matrix with row stride ld, or its transpose when `trans`.
dnnl::memory::desc matrix(bool trans, int rows, int cols, int ld, dt type) {
  const dnnl::memory::dims strides = trans ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
  return dnnl::memory::desc({rows, cols}, type, strides);
}

// Null where oneDNN has no implementation for the key.
std::unique_ptr<OneDnnMatmul> create(const MatmulKey& k) {
  auto m = std::make_unique<OneDnnMatmul>();
  m->key = k;
  m->a = matrix(k.ta, k.M, k.K, k.lda, type_of(k.operands));
  m->b = matrix(k.tb, k.K, k.N, k.ldb, type_of(k.operands));
  m->c = dnnl::memory::desc({k.M, k.N}, type_of(k.destination), dnnl::memory::dims{k.ldc, 1});
  if (k.bias) m->bias = dnnl::memory::desc({1, k.N}, dt::f32, dnnl::memory::dims{k.N, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (k.alpha != 1.0f) attr.set_output_scales(0, {k.alpha});
  if (k.beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(k.beta);
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::matmul::desc d = k.bias ? dnnl::matmul::desc(m->a, m->b, m->bias, m->c) : dnnl::matmul::desc(m->a, m->b, m->c);
    const dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
    m->impl = pd.impl_info_str();
    m->scratch = pd.scratchpad_desc();
    m->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return m;
}

}  // namespace

const OneDnnMatmul* onednn_matmul(const MatmulKey& k) {
  static std::mutex mu;
  static std::map<MatmulKey, std::unique_ptr<OneDnnMatmul>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(k);
  if (it == cache.end()) it = cache.emplace(k, create(k)).first;
  return it->second.get();
}

const std::string& matmul_impl(const OneDnnMatmul& m) { return m.impl; }

void run_matmul(const OneDnnMatmul& m, const void* A, const void* B, const float* bias, void* C) {
  dnnl::engine& eng = cpu_engine();
  try {
    dnnl::stream stream(eng);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, dnnl::memory(m.a, eng, const_cast<void*>(A))},
                                                  {DNNL_ARG_WEIGHTS, dnnl::memory(m.b, eng, const_cast<void*>(B))},
                                                  {DNNL_ARG_DST, dnnl::memory(m.c, eng, C)}};
    if (bias != nullptr) args.insert({DNNL_ARG_BIAS, dnnl::memory(m.bias, eng, const_cast<float*>(bias))});
    thread_local std::vector<unsigned char> scratch;
    if (scratch.size() < m.scratch.get_size()) scratch.resize(m.scratch.get_size());
    args.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(m.scratch, eng, scratch.data())});
    m.prim.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    ZT_CHECK(false, "oneDNN matmul %d x %d x %d failed: %s", m.key.M, m.key.N, m.key.K, e.what());
  }
}

}  // namespace zt
