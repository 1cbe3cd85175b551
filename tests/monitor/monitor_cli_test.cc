// DeepSpeed's monitors through the zerotrain binary, read back independently: a short run
// at dp 2 (ZeRO-1) and one with pp 2, each with "tensorboard" and "csv_monitor" on. The
// strict reader tests/monitor/tb_reader.py (standard-library Python: both CRC-32Cs of
// every record, the first event, every field number and wire type against TensorBoard's
// protos) reads the event file, and for every step of metrics.csv:
//   - the x-axis is step x train_batch_size (DeepSpeed's global samples);
//   - train_loss is the float32 rounding of the loss's hex column, exactly;
//   - lr, grad_norm and eval_loss equal metrics.csv's columns to their printed digits;
//   - one peak-RSS tag per rank; the csv_monitor files hold the same values.
// The reader must also refuse the file once one byte of it is changed.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::read_text;

struct CsvRow {
  double loss, lr, grad_norm;
  std::optional<double> val_loss;
};

class MonitorCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    ASSERT_EQ(run("", testing::kPrepareSmallCorpus), 0) << out_;
  }

  int run(const std::string& launcher, const std::string& args) {
    return testing::run_logged("cd " + dir_ + " && OMP_NUM_THREADS=1 " + launcher + testing::binary_dir() +
                                   "/zerotrain " + args,
                               dir_ + "/log", &out_);
  }

  void train(const std::string& name, int pp) {
    std::ofstream(dir_ + "/" + name + ".json") << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 3, "warmup_max_lr": 3e-3}},
      "zero_optimization": {"stage": )" << (pp > 1 ? 0 : 1) << R"(}, "wall_clock_breakdown": true,
      "tensorboard": {"enabled": true, "output_path": ")" << name << R"(/tb", "job_name": "job"},
      "csv_monitor": {"enabled": true, "output_path": ")" << name << R"(/csv"},
      "model": {"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 32},
      "data": {"train": "train.bin", "val": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "parallel": {"pp": )" << pp << R"(},
      "training": {"steps": 5, "eval_interval": 2, "eval_batches": 2, "output_dir": ")" << name << R"(",
                   "save_at_end": false}})";
    ASSERT_EQ(run(testing::mpirun_prefix(2), "train --config " + name + ".json"), 0) << out_;
  }

  std::map<int64_t, CsvRow> metrics(const std::string& name) {
    std::map<int64_t, CsvRow> m;
    std::istringstream in(read_text(dir_ + "/" + name + "/metrics.csv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
      CsvRow r{std::strtod(f[9].c_str(), nullptr), std::stod(f[3]), std::stod(f[4]), std::nullopt};
      if (!f[2].empty()) r.val_loss = std::stod(f[2]);
      m[std::stoll(f[0])] = r;
    }
    return m;
  }

  std::string event_file(const std::string& name) {
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/" + name + "/tb/job")) {
      if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) return e.path().string();
    }
    return "";
  }

  // The reader's JSON, or a failure with its message.
  Json read_events(const std::string& path, int* code) {
    std::string out;
    *code = testing::run_logged(testing::python() + " " + testing::oracle_source_dir() + "/tests/monitor/tb_reader.py " +
                                    path,
                                dir_ + "/reader.log", &out);
    return *code == 0 ? Json::parse(out) : Json{{"error", out}};
  }

  void check(const std::string& name, int ranks) {
    const std::string file = event_file(name);
    ASSERT_FALSE(file.empty()) << "no event file under " << name << "/tb/job";
    int code = 0;
    const Json j = read_events(file, &code);
    ASSERT_EQ(code, 0) << j.dump();
    EXPECT_EQ(j["file_version"], "brain.Event:2");
    const Json& s = j["scalars"];
    const auto rows = metrics(name);
    ASSERT_EQ(rows.size(), 5u);
    ASSERT_EQ(s["Train/Samples/train_loss"].size(), rows.size());
    size_t i = 0, evals = 0;
    for (const auto& [step, r] : rows) {
      const Json& loss = s["Train/Samples/train_loss"][i];
      EXPECT_EQ(loss[0].get<int64_t>(), step * 8) << name << " step " << step;
      EXPECT_EQ(loss[1].get<float>(), static_cast<float>(r.loss)) << name << " step " << step;
      EXPECT_NEAR(s["Train/Samples/lr"][i][1].get<double>(), r.lr, 1e-6 * r.lr + 1e-12) << name << " step " << step;
      EXPECT_NEAR(s["Train/Samples/grad_norm"][i][1].get<double>(), r.grad_norm, 6e-5) << name << " step " << step;
      if (r.val_loss) {
        const Json& e = s["Train/Samples/eval_loss"][evals++];
        EXPECT_EQ(e[0].get<int64_t>(), step * 8);
        EXPECT_NEAR(e[1].get<double>(), *r.val_loss, 6e-7 + 1e-6 * *r.val_loss) << name << " step " << step;
      }
      ++i;
    }
    EXPECT_EQ(evals, s["Train/Samples/eval_loss"].size());
    EXPECT_GE(evals, 2u);
    for (const char* t : {"forward", "backward", "step"}) {  // DeepSpeed's wall_clock_breakdown tags
      EXPECT_EQ(s[std::string("Train/Samples/elapsed_time_ms_") + t].size(), rows.size()) << t;
    }
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(s["Train/Samples/peak_rss_mib/rank" + std::to_string(r)].size(), rows.size()) << r;
    }
    // csv_monitor: the same values, one file per tag.
    std::istringstream csv(read_text(dir_ + "/" + name + "/csv/DeepSpeedJobName/Train_Samples_train_loss.csv"));
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "step,train_loss");
    for (size_t k = 0; std::getline(csv, line); ++k) {
      ASSERT_LT(k, rows.size());
      const Json& loss = s["Train/Samples/train_loss"][k];
      EXPECT_EQ(std::stoll(line), loss[0].get<int64_t>());
      EXPECT_EQ(std::strtof(line.c_str() + line.find(',') + 1, nullptr), loss[1].get<float>());
    }
  }

  std::string out_;
};

TEST_F(MonitorCli, EventFilesMatchMetricsCsvAtDp2) {
  train("dp2", 1);
  check("dp2", 2);
}

TEST_F(MonitorCli, EventFilesMatchMetricsCsvWithPp2) {
  train("pp2", 2);
  check("pp2", 2);
}

TEST_F(MonitorCli, TheReaderRefusesAChangedByte) {
  train("flip", 1);
  const std::string file = event_file("flip");
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(40);  // inside the second record
  char c = 0;
  f.read(&c, 1);
  f.seekp(40);
  c = static_cast<char>(c ^ 0x10);
  f.write(&c, 1);
  f.close();
  int code = 0;
  const Json j = read_events(file, &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(j.dump().find("CRC"), std::string::npos) << j.dump();
}

}  // namespace
}  // namespace zt
