// A test fixture for tests that run the zerotrain binary on a small prepared corpus: a
// temporary directory with train.bin (testing::write_small_corpus, byte tokenizer), run()
// for a shell command there (combined output into out_), and train(np, config) which
// writes run.json and runs `zerotrain train --config run.json` under mpirun. Tests only.
#pragma once

#include <fstream>
#include <string>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt::testing {

class CliCorpusTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    write_small_corpus(dir_);
    ASSERT_EQ(run(binary_dir() + "/zerotrain " + kPrepareSmallCorpus), 0) << out_;
  }
  int run(const std::string& command) { return run_logged("cd " + dir_ + " && " + command, dir_ + "/log", &out_); }
  int train(int np, const std::string& config, const std::string& extra_args = "") {
    std::ofstream(dir_ + "/run.json") << config;
    return run(mpirun_prefix(np) + binary_dir() + "/zerotrain train --config run.json " + extra_args);
  }
  std::string out_;
};

}  // namespace zt::testing
