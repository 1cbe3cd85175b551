// DeepSpeed's documented example configurations (src/config/examples/): each parses and
// is supported, or is refused with an error naming the unsupported key (expected.json).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "config/config.h"

namespace zt {
namespace {

std::string examples_dir() {
  const char* src = std::getenv("ZT_SOURCE_DIR");
  return std::string(src != nullptr ? src : ZT_SOURCE_DIR) + "/src/config/examples";
}

TEST(ConfigExamples, ParseOrRefuseNamingTheKey) {
  auto expected = load_json_file(examples_dir() + "/expected.json");
  ASSERT_TRUE(expected.ok()) << expected.status().to_string();
  int checked = 0;
  for (auto it = expected->begin(); it != expected->end(); ++it) {
    const std::string file = it.key(), want = it.value().get<std::string>();
    auto json = load_json_file(examples_dir() + "/" + file);
    ASSERT_TRUE(json.ok()) << json.status().to_string();
    Status s;
    auto c = parse_config(json.value());
    if (!c.ok()) {
      s = c.status();
    } else {
      ZtConfig cfg = c.value();
      s = resolve_batch(&cfg.batch, 1);
      if (s.ok()) s = check_supported(cfg);
    }
    if (want == "ok") {
      EXPECT_TRUE(s.ok()) << file << ": " << s.to_string();
    } else {
      EXPECT_FALSE(s.ok()) << file;
      EXPECT_EQ(s.message().rfind(want + ":", 0), 0u) << file << ": " << s.message();
    }
    std::printf("  %-30s %s\n", file.c_str(), s.ok() ? "parses" : s.message().c_str());
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

}  // namespace
}  // namespace zt
