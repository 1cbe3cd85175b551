// NVMe offload through the zerotrain binary under mpirun (2 ranks):
//  - an offloaded run (ZeRO-3, optimizer state, parameter shard and checkpointed
//    activations on disk) prints the same losses, bit for bit, as the in-memory run
//    (checkpointing the same blocks), and reports what is on disk;
//  - a full disk (a 256 KiB tmpfs), a missing and a read-only nvme_path, a swap chunk
//    changed on disk on one rank, and an I/O error: each gives its message naming the
//    file or key, every rank exits non-zero within seconds, and the last checkpoint
//    resumes to the uninterrupted run's losses.
// The full-disk and read-only cases need to mount a tmpfs (root); they skip, saying so,
// where mounting is refused.
#include <gtest/gtest.h>

#include <sys/mount.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::read_text;

struct CliResult {
  int code;
  std::string out;
  double seconds;
};

class OffloadCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    std::filesystem::create_directories(dir_ + "/swap");
    ASSERT_EQ(run(1, testing::kPrepareSmallCorpus).code, 0);
  }
  void TearDown() override {
    for (const std::string& m : mounts_) ::umount2(m.c_str(), MNT_DETACH);
    TempDirTest::TearDown();
  }

  CliResult run(int np, const std::string& args, const std::string& env = "") {
    CliResult r;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string launcher = np > 1 ? testing::mpirun_prefix(np) : "";
    r.code = testing::run_logged("cd " + dir_ + " && " + env + " OMP_NUM_THREADS=1 " + launcher +
                                     testing::binary_dir() + "/zerotrain " + args,
                                 dir_ + "/log", &r.out);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

  // A config writing to `out` (ZeRO-3 unless pp or tp > 1: then stage 1); nvme_path
  // empty: in memory.
  std::string config(const std::string& out, const std::string& nvme_path, int steps, bool params = true, int pp = 1,
                     int tp = 1) {
    const int stage = pp > 1 || tp > 1 ? 1 : 3;
    params = params && stage == 3;
    std::string offload;
    if (!nvme_path.empty()) {
      offload = R"(, "sub_group_size": 32768, "offload_optimizer": {"device": "nvme", "nvme_path": ")" + nvme_path +
                R"("})";
      if (params) offload += R"(, "offload_param": {"device": "nvme", "nvme_path": ")" + nvme_path + R"(", "max_in_cpu": 0})";
    }
    std::ofstream(dir_ + "/" + out + ".json") << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3, "weight_decay": 0.1}},
      "gradient_clipping": 1.0, "steps_per_print": 1,
      "activation_checkpointing": {"cpu_checkpointing": true, "number_checkpoints": 2},
      "zero_optimization": {"stage": )" << stage << R"(, "stage3_param_persistence_threshold": 0)" << offload << R"(},
      "parallel": {"pp": )" << pp << R"(, "tp": )" << tp << R"(},
      "model": {"n_layer": 2, "n_head": 2, "n_embd": 64, "n_positions": 32},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": )" << steps << R"(, "eval_interval": 0, "output_dir": ")" << out << R"(",
                   "save_interval": 2}})";
    return "train --config " + out + ".json";
  }

  // step -> loss as a hex float, from out/metrics.csv.
  std::map<int64_t, std::string> losses(const std::string& out) {
    std::map<int64_t, std::string> m;
    std::istringstream in(read_text(dir_ + "/" + out + "/metrics.csv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
      m[std::strtoll(line.c_str(), nullptr, 10)] = line.substr(line.rfind(',') + 1);
    }
    return m;
  }

  // Mounts a tmpfs of `options` at dir_/name; false (and the test should skip) if refused.
  bool mount_tmpfs(const std::string& name, const std::string& options) {
    const std::string at = dir_ + "/" + name;
    std::filesystem::create_directories(at);
    if (::mount("tmpfs", at.c_str(), "tmpfs", options.find("ro") == 0 ? MS_RDONLY : 0, options.c_str()) != 0) return false;
    mounts_.push_back(at);
    return true;
  }

  // The run that every fault is compared with: 4 steps in memory.
  void expect_resume_matches(const std::string& faulted, const std::string& clean) {
    const CliResult r = run(2, config(faulted, "swap", 4) + " --resume " + faulted + "/checkpoints");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto got = losses(faulted), want = losses(clean);
    ASSERT_EQ(got.count(4), 1u) << r.out;
    EXPECT_EQ(got.at(3), want.at(3));
    EXPECT_EQ(got.at(4), want.at(4));
  }

  std::vector<std::string> mounts_;
};

TEST_F(OffloadCli, NvmeRunIsBitIdenticalToTheInMemoryRunAndReportsTheDisk) {
  const CliResult mem = run(2, config("mem", "", 4));
  ASSERT_EQ(mem.code, 0) << mem.out;
  const CliResult off = run(2, config("off", "swap", 4));
  ASSERT_EQ(off.code, 0) << off.out;
  EXPECT_EQ(losses("off"), losses("mem"));
  EXPECT_EQ(losses("off").size(), 4u);
  EXPECT_NE(off.out.find("optimizer state and parameter shard on NVMe (swap)"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("checkpointed activations on disk (swap"), std::string::npos) << off.out;
  EXPECT_NE(mem.out.find("cpu_checkpointing asked for without an NVMe offload path"), std::string::npos) << mem.out;
  EXPECT_NE(off.out.find("offload per rank (NVMe)"), std::string::npos) << off.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/swap")) << "swap files must not outlive the run";
}

// Offload is a property of the model states, so pipeline stages and tensor-parallel
// slices offload theirs the same way (ZeRO-1, optimizer state and activations on disk).
TEST_F(OffloadCli, PipelineAndTensorParallelRunsAreBitIdenticalToo) {
  for (auto [pp, tp] : {std::pair{2, 1}, std::pair{1, 2}}) {
    const std::string tag = "p" + std::to_string(pp) + "t" + std::to_string(tp);
    ASSERT_EQ(run(2, config(tag + "mem", "", 3, false, pp, tp)).code, 0);
    const CliResult off = run(2, config(tag + "off", "swap", 3, false, pp, tp));
    ASSERT_EQ(off.code, 0) << off.out;
    EXPECT_NE(off.out.find("checkpointed activations on disk"), std::string::npos) << off.out;
    EXPECT_EQ(losses(tag + "off"), losses(tag + "mem")) << tag;
    EXPECT_EQ(losses(tag + "off").size(), 3u) << tag;
  }
}

TEST_F(OffloadCli, FullDiskStopsEveryRankAndTheCheckpointResumes) {
  if (!mount_tmpfs("small", "size=256k")) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk case not run";
  ASSERT_EQ(run(2, config("clean", "", 4)).code, 0);
  ASSERT_EQ(run(2, config("b", "swap", 2)).code, 0);
  const CliResult full = run(2, config("b", "small", 4) + " --resume b/checkpoints");
  EXPECT_NE(full.code, 0);
  EXPECT_NE(full.out.find("No space left on device"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("small/zerotrain."), std::string::npos) << "the swap file is named:\n" << full.out;
  EXPECT_LT(full.seconds, 60.0);
  expect_resume_matches("b", "clean");
}

TEST_F(OffloadCli, MissingAndReadOnlyPathsAreRefusedNamingTheKey) {
  ASSERT_EQ(run(2, config("clean", "", 4)).code, 0);
  ASSERT_EQ(run(2, config("m", "swap", 2)).code, 0);
  const CliResult missing = run(2, config("m", "no/such/dir", 4) + " --resume m/checkpoints");
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("/zero_optimization/offload_optimizer/nvme_path: no/such/dir is not an existing directory"),
            std::string::npos) << missing.out;
  expect_resume_matches("m", "clean");
  if (!mount_tmpfs("ro", "ro,size=64k")) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): read-only case not run";
  const CliResult ro = run(2, config("r", "ro", 2));
  EXPECT_NE(ro.code, 0);
  EXPECT_NE(ro.out.find("nvme_path: ro is not writable"), std::string::npos) << ro.out;
}

TEST_F(OffloadCli, ChangedSwapChunkOnOneRankStopsEveryRankAndTheCheckpointResumes) {
  ASSERT_EQ(run(2, config("clean", "", 4)).code, 0);
  // Per rank: exp_avg and exp_avg_sq, two chunks each, written at start and at every
  // step (4 writes a pass); the 13th write is step 3's, read back (and refused) in step 4.
  const CliResult bad = run(2, config("c", "swap", 4, /*params=*/false), "ZT_TEST_SWAP_CORRUPT=13:1");
  EXPECT_NE(bad.code, 0) << bad.out;
  EXPECT_NE(bad.out.find("flipped a byte"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("checksum"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("failed on 1 other rank"), std::string::npos) << "rank 0 must stop too:\n" << bad.out;
  EXPECT_EQ(bad.out.find("step 4/4"), std::string::npos) << "the corrupted update must not complete";
  EXPECT_LT(bad.seconds, 60.0);
  expect_resume_matches("c", "clean");
}

TEST_F(OffloadCli, IoErrorNamesTheFileAndStopsTheRun) {
  const CliResult bad = run(1, config("e", "swap", 4, false), "ZT_TEST_IO_ERROR=9");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("Input/output error"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("swap/zerotrain."), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace zt
