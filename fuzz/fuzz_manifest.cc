// libFuzzer harness for the checkpoint manifest and the `latest` pointer file.
//
// The input is tried as it is (so the checksum checks themselves are fuzzed), then
// with its checksum repaired so that mutations reach the structural checks behind it:
// a JSON object gets the correct "checksum", and for `latest` the input becomes the
// body and gets the correct "xxh3" line. What parses must round-trip through the
// writer: manifest_to_text / latest_to_text output parses back to the same values.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/checksum.h"
#include "checkpoint/latest_file.h"
#include "checkpoint/manifest.h"

namespace {

constexpr const char* kLabel = "fuzz/manifest.json";
constexpr const char* kLatestLabel = "fuzz/latest";

void require(bool cond, const char* what, const std::string& detail) {
  if (cond) return;
  std::fprintf(stderr, "fuzz_manifest: invariant violated: %s: %s\n", what, detail.c_str());
  std::abort();
}

void try_manifest(const std::string& text) {
  zt::StatusOr<zt::Manifest> m = zt::parse_manifest(text, kLabel);
  if (!m.ok()) {
    require(m.status().message().rfind(kLabel, 0) == 0, "manifest error does not name the file", m.status().message());
    return;
  }
  const std::string again = zt::manifest_to_text(m.value());
  zt::StatusOr<zt::Manifest> m2 = zt::parse_manifest(again, kLabel);
  require(m2.ok(), "written manifest does not parse back", m2.status().message());
  require(zt::manifest_to_text(m2.value()) == again, "manifest round trip changed the text", again);
}

void try_latest(const std::string& text) {
  zt::StatusOr<zt::LatestPointer> p = zt::parse_latest(text, kLatestLabel);
  if (!p.ok()) {
    require(p.status().message().rfind(kLatestLabel, 0) == 0, "latest error does not name the file",
            p.status().message());
    return;
  }
  require(zt::latest_to_text(p.value()) == text, "latest round trip changed the text", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try_manifest(text);
  try_latest(text);
  // Checksums repaired.
  try_latest(text + "xxh3 " + zt::checksum_hex(text.data(), text.size()) + "\n");
  zt::StatusOr<zt::Json> j = zt::parse_json_strict(text, kLabel);
  if (j.ok() && j.value().is_object()) {
    zt::Json body = std::move(j).value();
    body.erase("checksum");
    const std::string dump = body.dump();
    body["checksum"] = zt::checksum_hex(dump.data(), dump.size());
    try_manifest(body.dump());
  }
  return 0;
}
