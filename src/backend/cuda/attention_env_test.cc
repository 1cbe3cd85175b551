// ZT_CUDA_ATTENTION's values: the four documented ones pass, anything else is refused with
// the variable, the value and the allowed values named (a misspelt path must not run the
// default silently). Needs no GPU.
#include "backend/cuda/attention_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace zt {
namespace {

// Sets ZT_CUDA_ATTENTION for one scope and restores what was there.
class ScopedAttentionEnv {
 public:
  explicit ScopedAttentionEnv(const char* value) {
    if (const char* old = std::getenv("ZT_CUDA_ATTENTION")) old_ = old;
    setenv("ZT_CUDA_ATTENTION", value, 1);
  }
  ~ScopedAttentionEnv() {
    if (old_) {
      setenv("ZT_CUDA_ATTENTION", old_->c_str(), 1);
    } else {
      unsetenv("ZT_CUDA_ATTENTION");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(CudaAttentionEnv, TheDocumentedValuesPass) {
  for (const char* v : {"", "fp32", "materialized", "flash-recompute"}) {
    ScopedAttentionEnv env(v);
    EXPECT_TRUE(cuda::check_attention_env().ok()) << v;
  }
}

TEST(CudaAttentionEnv, AnyOtherValueIsRefusedNamingTheAllowedOnes) {
  for (const char* v : {"flash", "FP32", "flash_recompute", "materialised"}) {
    ScopedAttentionEnv env(v);
    const Status s = cuda::check_attention_env();
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << v;
    EXPECT_NE(s.message().find(std::string("ZT_CUDA_ATTENTION=\"") + v + "\""), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("fp32, materialized, flash-recompute"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace zt
