// docs/config-coverage.md is what the parser generates (regenerate with
// `zerotrain config-coverage > docs/config-coverage.md`).
#include "config/coverage.h"

#include <gtest/gtest.h>

#include "io/atomic_file.h"

namespace zt {
namespace {

TEST(ConfigCoverage, DocumentMatchesParser) {
  auto md = config_coverage_markdown();
  ASSERT_TRUE(md.ok()) << md.status().to_string();
  auto doc = read_file(std::string(ZT_SOURCE_DIR) + "/docs/config-coverage.md", 1 << 22);
  ASSERT_TRUE(doc.ok()) << doc.status().to_string();
  EXPECT_TRUE(doc.value() == md.value())
      << "docs/config-coverage.md is stale: run `zerotrain config-coverage > docs/config-coverage.md`";
}

TEST(ConfigCoverage, ListsKeysWithDefaultsAndEveryTable) {
  auto md = config_coverage_markdown();
  ASSERT_TRUE(md.ok());
  for (const char* want : {"| `/zero_optimization/stage` | an integer 0..3 | `0` |", "/optimizer/params/max_coeff",
                           "/optimizer/params/freeze_step", "| `/bfloat16` | `/bf16` |", "| `/sparse_attention` |",
                           "| `/train_batch_size` | train_micro_batch_size_per_gpu x"}) {
    EXPECT_NE(md->find(want), std::string::npos) << want;
  }
}

}  // namespace
}  // namespace zt
