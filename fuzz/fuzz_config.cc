// libFuzzer harness for the config reader: strict JSON, then parse_config, then the
// arithmetic the train command runs on it (resolve_parallel for 1 and 8 ranks,
// resolve_batch, check_supported, checkpointed_blocks). Besides the sanitizers it
// checks that every error names where it is (the label, or a JSON pointer) and that a
// resolved batch triple is consistent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/config.h"

namespace {

constexpr const char* kLabel = "fuzz-config.json";

void require(bool cond, const char* what, const std::string& detail) {
  if (cond) return;
  std::fprintf(stderr, "fuzz_config: invariant violated: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_resolved(zt::ZtConfig c, int world) {
  zt::Status s = zt::resolve_parallel(&c.parallel, world);
  if (!s.ok()) {
    require(s.message().rfind("/parallel", 0) == 0, "resolve_parallel error names no pointer", s.message());
    return;
  }
  require(static_cast<int64_t>(c.parallel.dp) * c.parallel.pp * c.parallel.tp == world, "dp x pp x tp != world", "");
  s = zt::resolve_batch(&c.batch, c.parallel.dp);
  if (!s.ok()) {
    require(s.message().rfind("/train_", 0) == 0, "resolve_batch error names no pointer", s.message());
    return;
  }
  const zt::BatchConfig& b = c.batch;
  require(b.micro_batch >= 1 && b.grad_accum >= 1, "resolved batch has a zero", "");
  __int128 product = static_cast<__int128>(b.micro_batch) * b.grad_accum * c.parallel.dp;
  require(product == b.train_batch_size, "resolved batch triple is inconsistent", std::to_string(b.train_batch_size));
  s = zt::check_supported(c);
  if (!s.ok()) require(s.message().rfind("/", 0) == 0, "check_supported error names no pointer", s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  zt::StatusOr<zt::Json> root = zt::parse_json_strict(text, kLabel);
  if (!root.ok()) {
    require(root.status().message().rfind(kLabel, 0) == 0, "JSON error does not name the file",
            root.status().message());
    return 0;
  }
  zt::StatusOr<zt::ZtConfig> config = zt::parse_config(root.value());
  if (!config.ok()) {
    const std::string m = config.status().message();
    require(m.rfind("/", 0) == 0 || m.rfind("config:", 0) == 0, "config error names no pointer", m);
    return 0;
  }
  check_resolved(config.value(), 1);
  check_resolved(config.value(), 8);
  const std::vector<bool> blocks = zt::checkpointed_blocks(config.value().activation_checkpointing,
                                                           config.value().model.n_layer);
  require(blocks.empty() || blocks.size() == static_cast<size_t>(config.value().model.n_layer),
          "checkpointed_blocks size", std::to_string(blocks.size()));
  return 0;
}
