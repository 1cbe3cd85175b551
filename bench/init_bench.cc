// Times zerotrain's parameter initialisation (nn/param_init.h) of a GPT-2-shaped model:
// in place in host memory (the CPU backend), and through host chunks into memory the host
// may not write (a GPU's path: NotHostMemory below is the CPU backend saying host() false,
// so its copies cost a memcpy and the time is the drawing's), as parameters a second. One
// JSON line.
//   init_bench [--layers L --heads H --embd C --vocab V] [--threads P] [--reps R]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/threads.h"
#include "core/timer.h"
#include "nn/gpt_params.h"

namespace {

// The CPU backend in every call but host(): initialisation takes the path of a GPU's memory.
class NotHostMemory final : public zt::Backend {
 public:
  zt::Device device() const override { return cpu().device(); }
  zt::DType compute_dtype() const override { return cpu().compute_dtype(); }
  bool host() const override { return false; }
  const zt::KernelOps& ops() const override { return cpu().ops(); }
  std::string describe() const override { return "host memory taken for a device's"; }
  zt::StatusOr<zt::Arena> allocate(size_t count, zt::DType dtype, const char* what) const override {
    return cpu().allocate(count, dtype, what);  // the CPU backend's arenas, released by it
  }
  void copy(void* dst, const void* src, size_t bytes) const override { cpu().copy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { cpu().zero(dst, bytes); }

 protected:
  void release(void*, size_t) const override {}

 private:
  static const zt::Backend& cpu() { return zt::cpu_backend(); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of `reps` initialisations of the whole table into b's arena.
double time_init(const zt::Backend& b, const zt::ParamTable& table, int reps) {
  auto arena = b.allocate(table.numel(), zt::DType::kF32, "the parameters");
  if (!arena.ok()) {
    std::fprintf(stderr, "%s\n", arena.status().to_string().c_str());
    std::exit(1);
  }
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    zt::Stopwatch t;
    zt::init_params_into(b, table, {0, table.numel()}, arena->data(), 1234);
    s.push_back(t.seconds());
  }
  return median(s);
}

}  // namespace

int main(int argc, char** argv) {
  zt::GptConfig c = zt::GptConfig::gpt2_small();
  int threads = 2, reps = 3;
  CLI::App app{"init_bench: times parameter initialisation"};
  app.add_option("--layers", c.n_layer);
  app.add_option("--heads", c.n_head);
  app.add_option("--embd", c.n_embd);
  app.add_option("--vocab", c.vocab_size);
  app.add_option("--threads", threads);
  app.add_option("--reps", reps);
  CLI11_PARSE(app, argc, argv);
  zt::set_num_threads(threads);
  const zt::ParamTable table = zt::build_gpt_param_table(c);
  const double host = time_init(zt::cpu_backend(), table, reps);
  const double chunked = time_init(NotHostMemory(), table, reps);
  const double n = static_cast<double>(table.numel());
  std::printf("{\"bench\":\"init\",\"params\":%.0f,\"threads\":%d,\"host_s\":%.3f,\"chunked_s\":%.3f,"
              "\"host_mparams_per_s\":%.1f,\"chunked_mparams_per_s\":%.1f}\n",
              n, threads, host, chunked, n / host / 1e6, n / chunked / 1e6);
  return 0;
}
