// Issue 29's capacity and speed runs: trains `--steps` steps of a configuration's model on
// random tokens and prints, per step, the loss and the time split (forward, backward, the
// optimizer step and, of it, the host's update and the time blocked on copies between
// host and device), then the memory (the trainer's arenas on the device and in host
// memory beside `estimate`'s figures, the device's own used-memory high-water mark, the
// host's peak RSS) and one JSON line.
//   offload_bench --config cfg.json [--steps 3] [--grad-accum N]
// The configuration is a DeepSpeed config as `zerotrain train` reads it ("training":
// {"device": "cuda"} for the GPU). It is loaded as `estimate` loads it, so offload, which
// `train` still refuses on a GPU until its test has run there, is measured here; the
// device is then opened for real. With "device": "cpu" and ZT_TEST_BACKEND=guarded the
// same harness runs the device-neutral path on the CPU (a smoke test of the bench).
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "engine/memory_estimate.h"
#include "engine/run_config.h"
#include "engine/trainer.h"
#include "io/json_strict.h"

namespace {

// The device memory in use now (all of the process's: arenas, CUDA context, workspaces).
size_t device_used_bytes(const zt::Backend& b) {
  if (b.device() != zt::Device::kCuda) return 0;
  size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 0;
  return total - free_b;
}

zt::StatusOr<zt::TrainerOptions> options_from(const std::string& path, int grad_accum) {
  std::ifstream f(path);
  if (!f) return zt::Status::InvalidArgument(path + ": cannot read");
  std::stringstream text;
  text << f.rdbuf();
  ZT_ASSIGN_OR_RETURN(zt::Json root, zt::parse_json_strict(text.str(), path));
  if (grad_accum > 0) root["gradient_accumulation_steps"] = grad_accum;
  ZT_ASSIGN_OR_RETURN(const zt::ZtConfig cfg, zt::load_run_config(root, 1, zt::RunPurpose::kPlan));
  zt::TrainerOptions o = zt::trainer_options(cfg);
  o.micro_batches = static_cast<int>(cfg.batch.grad_accum);
  if (cfg.device_planned) {  // planned as estimate does; now opened
    ZT_ASSIGN_OR_RETURN(o.backend, zt::backend_for(cfg.device, o.backend->compute_dtype()));
  }
  return o;
}

double gib(size_t b) { return static_cast<double>(b) / (1u << 30); }

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  int steps = 3, grad_accum = 0;
  CLI::App app{"offload_bench: capacity and speed of a configuration's training steps"};
  app.add_option("--config", config)->required();
  app.add_option("--steps", steps);
  app.add_option("--grad-accum", grad_accum, "gradient_accumulation_steps (default: the config's)");
  CLI11_PARSE(app, argc, argv);
  auto opts = options_from(config, grad_accum);
  if (!opts.ok()) return std::fprintf(stderr, "%s\n", opts.status().to_string().c_str()), 2;
  const zt::TrainerOptions& o = opts.value();
  auto est = zt::estimate_rank_memory(o, 1, 0, 1, 0);
  auto created = zt::Trainer::create(o);
  if (!created.ok() || !est.ok()) {
    std::fprintf(stderr, "%s\n", (created.ok() ? est.status() : created.status()).to_string().c_str());
    return 2;
  }
  zt::Trainer& t = *created.value();
  std::printf("backend: %s\nmodel: %.3f B parameters; %d micro-batches of %d x %d tokens\n%s\n",
              t.backend().describe().c_str(), o.model.num_parameters() / 1e9, o.micro_batches, o.micro_batch,
              o.seq_len, t.offload_description().c_str());
  const int n = o.micro_batch * o.seq_len;
  zt::Rng rng(1);
  std::vector<std::vector<int32_t>> x(static_cast<size_t>(o.micro_batches)), y(x.size());
  std::vector<zt::MicroBatch> micro;
  for (size_t m = 0; m < x.size(); ++m) {
    for (int i = 0; i < n; ++i) x[m].push_back(static_cast<int32_t>(rng.below(o.model.vocab_size)));
    for (int i = 0; i < n; ++i) y[m].push_back(x[m][static_cast<size_t>((i + 1) % n)]);
    micro.push_back({x[m].data(), y[m].data()});
  }
  size_t device_peak = device_used_bytes(t.backend());
  double last_s = 0.0, first_loss = 0.0, last_loss = 0.0;
  for (int s = 0; s < steps; ++s) {
    auto st = t.step(micro);
    if (!st.ok()) return std::fprintf(stderr, "%s\n", st.status().to_string().c_str()), 1;
    device_peak = std::max(device_peak, device_used_bytes(t.backend()));
    last_s = st->forward_s + st->backward_s + st->optimizer_s;
    if (s == 0) first_loss = st->loss;
    last_loss = st->loss;
    std::printf("step %d: loss %.4f; %.2f s = forward %.2f + backward %.2f + optimizer %.2f (host update %.2f, "
                "blocked on copies %.2f)\n",
                s + 1, st->loss, last_s, st->forward_s, st->backward_s, st->optimizer_s, st->host_update_s,
                st->copy_wait_s);
  }
  const zt::MemoryReport m = t.memory();
  const size_t arenas = m.param_bytes + m.grad_bytes + m.optimizer_bytes + m.bucket_bytes + m.offload_buffer_bytes +
                        m.activation_bytes;
  const double tflops = o.model.flops_per_token(o.seq_len) * o.micro_batches * n / last_s / 1e12;
  std::printf("memory: device arenas %.2f GiB (estimate %.2f), host %.2f GiB (estimate %.2f), device used at most "
              "%.2f GiB, host peak RSS %.2f GiB; %.1f TFLOP/s in the last step\n",
              gib(arenas - m.host_bytes), gib(est->device_bytes()), gib(m.host_bytes), gib(est->host_bytes),
              gib(device_peak), gib(m.peak_rss_bytes), tflops);
  std::printf("{\"params\":%lld,\"steps\":%d,\"first_loss\":%.5f,\"last_loss\":%.5f,\"step_s\":%.3f,\"tflops\":%.2f,"
              "\"device_arena_gib\":%.3f,\"host_gib\":%.3f,\"device_used_gib\":%.3f,\"peak_rss_gib\":%.3f}\n",
              static_cast<long long>(o.model.num_parameters()), steps, first_loss, last_loss, last_s, tflops,
              gib(arenas - m.host_bytes), gib(m.host_bytes), gib(device_peak), gib(m.peak_rss_bytes));
  return steps < 2 || last_loss < first_loss ? 0 : 3;  // one step cannot show the loss falling
}
