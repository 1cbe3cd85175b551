// libFuzzer harness for the safetensors reader: SafetensorsFile::parse on the input.
// Checks that errors name the file and that an accepted file's tensors tile its data
// buffer exactly, then reads every F32 tensor (the buffer it allocates is bounded by
// the input's own size).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"

namespace {

constexpr const char* kLabel = "fuzz.safetensors";

void require(bool cond, const char* what, const std::string& detail) {
  if (cond) return;
  std::fprintf(stderr, "fuzz_safetensors: invariant violated: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  zt::StatusOr<zt::SafetensorsFile> file = zt::SafetensorsFile::parse(std::move(bytes), kLabel);
  if (!file.ok()) {
    require(file.status().message().rfind(kLabel, 0) == 0, "error does not name the file", file.status().message());
    return 0;
  }
  size_t covered = 0;
  for (const auto& [name, e] : file.value().entries()) {
    require(e.begin <= e.end && e.end <= size, "entry outside the file", name);
    covered += e.end - e.begin;
    require(file.value().data(name) != nullptr, "entry without data", name);
    if (e.dtype != zt::StDType::kF32) continue;
    std::vector<float> out((e.end - e.begin) / sizeof(float));
    zt::Status s = file.value().read_f32(name, e.shape, out.data());
    require(s.ok(), "read_f32 of an accepted tensor failed", s.message());
  }
  require(covered <= size, "tensors cover more than the file", std::to_string(covered));
  return 0;
}
