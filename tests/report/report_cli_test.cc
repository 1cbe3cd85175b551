// `zerotrain report` end to end: two short runs (one with a higher learning rate and 4
// experts, expert parallel over its 2 ranks) drawn overlaid into one page, opened in Debian's headless Chromium with every HTTP request
// sent to a dead proxy (the page needs no network). The DOM after the scripts ran must
// hold each chart with the number of points drawn (data-points, data-series); the page
// must reference nothing outside itself; the screenshot is kept as a test artifact
// (<build>/test-artifacts/report.png), and --png writes a real PNG of the loss curves.
// Skips, saying so, where chromium or gnuplot is not installed (setup.sh installs both).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

class ReportCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    ASSERT_EQ(run(testing::kPrepareSmallCorpus), 0) << out_;
  }
  int run(const std::string& args, const std::string& launcher = "") {
    return testing::run_logged("cd " + dir_ + " && OMP_NUM_THREADS=1 " + launcher + testing::binary_dir() +
                                   "/zerotrain " + args,
                               dir_ + "/log", &out_);
  }
  void train(const std::string& name, double lr, bool experts = false) {
    const std::string moe = experts ? R"(, "moe": {"num_experts": 4, "num_experts_per_tok": 2, "ep_size": 2})" : "";
    std::ofstream(dir_ + "/" + name + ".json") << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4,
      "optimizer": {"type": "AdamW", "params": {"lr": )" << lr << R"(}},
      "model": {"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 32)" << moe << R"(},
      "data": {"train": "train.bin", "val": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 6, "eval_interval": 3, "eval_batches": 2, "output_dir": ")" << name << R"(",
                   "save_at_end": false}})";
    ASSERT_EQ(run("train --config " + name + ".json", testing::mpirun_prefix(2)), 0) << out_;
  }
  static bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null").c_str()) == 0; }
  std::string out_;
};

TEST_F(ReportCli, TwoRunsOverlaidRenderOfflineInHeadlessChromium) {
  if (!have("chromium") || !have("gnuplot")) GTEST_SKIP() << "chromium or gnuplot not installed: report rendering not checked";
  train("a", 3e-3);
  train("b", 1e-3, /*experts=*/true);
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/a/run_report.json"));
  ASSERT_EQ(run("report a b -o report.html --png loss.png"), 0) << out_;
  const std::string html = testing::read_text(dir_ + "/report.html");
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?(https?:)?//)"))) << "an external reference";
  EXPECT_EQ(html.find("<link"), std::string::npos);
  const std::string chrome = "chromium --headless --no-sandbox --disable-gpu --proxy-server=http://127.0.0.1:9 "
                             "--window-size=1150,1900 --hide-scrollbars ";
  ASSERT_EQ(testing::run_logged("cd " + dir_ + " && timeout 120 " + chrome + "--dump-dom file://" + dir_ +
                                    "/report.html 2>/dev/null",
                                dir_ + "/dom", &out_),
            0);
  auto points = [&](const std::string& id) {
    std::smatch m;
    const std::regex re("<canvas id=\"" + id + "\"[^>]*data-points=\"(\\d+)\" data-series=\"(\\d+)\"");
    return std::regex_search(out_, m, re) ? std::make_pair(std::stoi(m[1]), std::stoi(m[2])) : std::make_pair(-1, -1);
  };
  // 6 train-loss points per run plus evaluations at steps 1, 3 and 6.
  EXPECT_EQ(points("loss"), std::make_pair(2 * (6 + 3), 4)) << out_;
  EXPECT_EQ(points("lr"), std::make_pair(12, 2));
  EXPECT_EQ(points("throughput"), std::make_pair(24, 4));  // tokens/s and MFU per run
  EXPECT_EQ(points("breakdown"), std::make_pair(18, 3));   // forward, backward, optimizer per step
  EXPECT_EQ(points("memory"), std::make_pair(6, 3));       // 2 ranks: RSS, states, estimate
  EXPECT_EQ(points("moe"), std::make_pair(18, 3));         // run b: balance loss, imbalance, dropped per step
  EXPECT_NE(out_.find("Comm. Op"), std::string::npos) << "the communication table";
  const std::string artifacts = testing::binary_dir() + "/test-artifacts";
  std::filesystem::create_directories(artifacts);
  ASSERT_EQ(std::system(("cd " + dir_ + " && timeout 120 " + chrome + "--screenshot=" + artifacts +
                         "/report.png file://" + dir_ + "/report.html >/dev/null 2>&1").c_str()),
            0);
  for (const std::string& png : {artifacts + "/report.png", dir_ + "/loss.png"}) {
    std::ifstream f(png, std::ios::binary);
    char sig[8] = {};
    f.read(sig, 8);
    EXPECT_EQ(std::string(sig + 1, 3), "PNG") << png;
  }
}

TEST_F(ReportCli, MissingRunDirectoryIsNamed) {
  EXPECT_EQ(run("report nowhere -o r.html"), 2);
  EXPECT_NE(out_.find("nowhere/metrics.csv: no such file"), std::string::npos) << out_;
}

}  // namespace
}  // namespace zt
