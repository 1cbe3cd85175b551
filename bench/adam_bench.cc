// Times zerotrain's AdamW update on N parameters (default: GPT-2 small's 124,439,808,
// as one flat arena with GPT-2's decay layout) and the machine's STREAM-style triad
// a[i] = b[i] + s * c[i] over arrays of the same length, alternating, on the same
// threads. Bytes are counted as STREAM does (no write-allocate traffic): AdamW moves
// 7 floats per parameter (reads p, g, m, v; writes p, m, v), triad 3. Also the
// mixed-precision step, which ends with the bf16 compute copy of the parameters: AdamW's
// update_copy (the copy written chunk by chunk inside the update's pass) against the
// update followed by the bulk cast (a second pass over the parameters). One JSON line.
//   adam_bench [--threads P] [--reps R] [--isa-report]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/cpu_features.h"
#include "core/timer.h"
#include "core/threads.h"
#include "kernels/cpu/half_ops.h"
#include "nn/gpt_params.h"
#include "optim/adamw.h"
#include "tensor/buffer.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void triad(float* a, const float* b, const float* c, float s, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 7;
  CLI::App app{"adam_bench: times the AdamW step and triad bandwidth"};
  app.add_option("--threads", threads);
  app.add_option("--reps", reps);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::set_num_threads(threads);
  const zt::ParamTable table = zt::build_gpt_param_table(zt::GptConfig::gpt2_small());
  const size_t n = table.numel();
  zt::FloatBuffer p(n), g(n);
  for (size_t i = 0; i < n; ++i) {
    p[i] = 0.01f * static_cast<float>(i % 97);
    g[i] = 0.001f * static_cast<float>(i % 89) - 0.04f;
  }
  auto opt_or = zt::AdamW::create(table, {0, n}, zt::AdamWOptions{});
  if (!opt_or.ok()) {
    std::fprintf(stderr, "%s\n", opt_or.status().to_string().c_str());
    return 1;
  }
  zt::AdamW& opt = *opt_or.value();
  zt::FloatBuffer ta(n), tb(n), tc(n);
  for (size_t i = 0; i < n; ++i) tb[i] = tc[i] = 1.0f;
  const zt::ActivationOps<zt::half_t>& half = zt::cpu_half_ops(zt::DType::kBF16);
  std::vector<zt::half_t> copy(n);
  std::vector<float*> states;
  for (const zt::StateTensor& t : opt.state()) states.push_back(t.data);
  std::vector<double> adam_s, triad_s, fused_s, two_pass_s;
  zt::StepHyper h;
  h.lr = 1e-4;
  opt.step(p.data(), g.data(), h);  // warm-up: first touch of the moments
  triad(ta.data(), tb.data(), tc.data(), 0.5f, static_cast<int64_t>(n));
  for (int r = 0; r < reps; ++r) {
    zt::Stopwatch sw;
    opt.step(p.data(), g.data(), h);
    adam_s.push_back(sw.seconds());
    sw.restart();
    triad(ta.data(), tb.data(), tc.data(), 0.5f, static_cast<int64_t>(n));
    triad_s.push_back(sw.seconds());
    sw.restart();
    opt.begin_step(h);
    opt.update_copy(0, n, p.data(), g.data(), states.data(), copy.data(), half);
    fused_s.push_back(sw.seconds());
    sw.restart();
    opt.begin_step(h);
    opt.update(0, n, p.data(), g.data(), states.data());
    half.from_f32(copy.data(), p.data(), static_cast<int64_t>(n));
    two_pass_s.push_back(sw.seconds());
  }
  const double adam = median(adam_s), tri = median(triad_s);
  const double adam_gbs = 7.0 * 4.0 * static_cast<double>(n) / adam / 1e9;
  const double triad_gbs = 3.0 * 4.0 * static_cast<double>(n) / tri / 1e9;
  std::printf("{\"impl\":\"zerotrain\",\"isa\":\"%s\",\"params\":%zu,\"adam_ms\":%.2f,\"adam_gbs\":%.2f,"
              "\"triad_ms\":%.2f,\"triad_gbs\":%.2f,\"bf16_copy_fused_ms\":%.2f,\"bf16_copy_two_pass_ms\":%.2f}\n",
              zt::isa_name(zt::active_isa()), n, adam * 1e3, adam_gbs, tri * 1e3, triad_gbs, median(fused_s) * 1e3,
              median(two_pass_s) * 1e3);
  return 0;
}
