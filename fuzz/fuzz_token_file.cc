// libFuzzer harness for token files: writes the input to a temporary file (one per
// process, reused, removed at exit) and opens it as llm.c, as raw uint16, and through
// detect(). Checks that every error names the file and that an accepted file's token
// count times its width (2 bytes, or 4 for llm.c's uint32 variant) matches its size exactly.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/token_file.h"

namespace {

void require(bool cond, const char* what, const std::string& detail) {
  if (cond) return;
  std::fprintf(stderr, "fuzz_token_file: invariant violated: %s: %s\n", what, detail.c_str());
  std::abort();
}

const std::string& temp_path() {
  static const std::string path = "/tmp/zt_fuzz_token_" + std::to_string(::getpid()) + ".bin";
  static const bool cleanup = std::atexit([] { ::unlink(temp_path().c_str()); }) == 0;  // kept after a crash
  (void)cleanup;
  return path;
}

void write_input(const uint8_t* data, size_t size) {
  const int fd = ::open(temp_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  require(fd >= 0, "cannot create", temp_path());
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    require(n > 0, "cannot write", temp_path());
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

void open_as(zt::TokenFileFormat format, size_t file_bytes) {
  zt::StatusOr<zt::TokenFile> f = zt::TokenFile::open(temp_path(), format);
  if (!f.ok()) {
    require(f.status().message().find(temp_path()) != std::string::npos, "error does not name the file",
            f.status().message());
    return;
  }
  const zt::TokenFile& t = f.value();
  const size_t header = format == zt::TokenFileFormat::kLlmc ? zt::kLlmcHeaderBytes : 0;
  require(t.size() > 0, "accepted an empty token file", "");
  require(header + static_cast<size_t>(t.token_bytes()) * t.size() == file_bytes,
          "token count does not match the file size", std::to_string(t.size()));
  require(t.token_bytes() == 2 || format == zt::TokenFileFormat::kLlmc, "a raw file read as uint32", "");
  uint32_t sum = 0;
  for (size_t i = 0; i < t.size(); ++i) sum += t[i];  // every token is readable
  (void)sum;
  zt::Status s = t.check_tokens_below(50257);
  if (!s.ok()) require(s.message().find(temp_path()) != std::string::npos, "vocab error does not name the file", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_input(data, size);
  open_as(zt::TokenFileFormat::kLlmc, size);
  open_as(zt::TokenFileFormat::kRawUint16, size);
  zt::StatusOr<zt::TokenFileFormat> detected = zt::TokenFile::detect(temp_path());
  if (detected.ok()) open_as(detected.value(), size);
  return 0;
}
