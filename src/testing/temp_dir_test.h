// TempDirTest: a GoogleTest fixture base whose tests each get a fresh directory under /tmp
// (dir_), removed after the test. Fixtures that need files derive from it and call
// TempDirTest::SetUp() first when they override SetUp.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace zt::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zt_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;  // best effort: a test may have left a read-only file
    std::filesystem::remove_all(dir_, ec);
  }

  std::string dir_;
};

}  // namespace zt::testing
