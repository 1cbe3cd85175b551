// Slurm for real (issue 16, acceptance 2): a private cluster on this machine
// (tests/cluster/slurm_cluster.sh: slurmctld plus one slurmd per network-namespace host,
// 2 nodes), `srun --mpi=pmix` of `zerotrain train` across 2 nodes x 2 tasks against the
// same run under mpirun on this host, and docs/slurm/train.sbatch submitted as written.
// The four ranks compute the same sums in the same order either way (only the launcher
// and the transport differ), so the losses must be the same bits. Skipped, naming why,
// where slurm-wlm or network namespaces are missing.
#include <gtest/gtest.h>

#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/launch.h"

namespace {

std::string source(const std::string& rel) { return std::string(ZT_SOURCE_DIR) + "/" + rel; }

std::vector<std::string> csv_loss_hex(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(zt::testing::read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("step,", 0) == 0) continue;
    out.push_back(line.substr(line.rfind(',') + 1));
  }
  return out;
}

class Slurm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    lock_fd_ = ::open("/tmp/zt_netns_hosts.lock", O_CREAT | O_RDWR, 0644);  // the namespace hosts are shared
    if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX);
    cluster_ = ::testing::TempDir() + "zt_slurm";
    const auto t0 = std::chrono::steady_clock::now();
    std::string out;
    const int rc = zt::testing::run_logged(source("tests/cluster/slurm_cluster.sh") + " up " + cluster_ + " 2",
                                           ::testing::TempDir() + "zt_slurm_up.log", &out);
    start_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != 0) skip_reason_ = "no Slurm test cluster here (exit " + std::to_string(rc) + "): " + out;
  }
  static void TearDownTestSuite() {
    std::string out;
    zt::testing::run_logged(source("tests/cluster/slurm_cluster.sh") + " down " + cluster_ + " 2",
                            ::testing::TempDir() + "zt_slurm_down.log", &out);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    dir_ = ::testing::TempDir() + "zt_slurm_run";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    zt::testing::write_small_corpus(dir_);
    std::string out;
    ASSERT_EQ(run("", std::string("zerotrain ") + zt::testing::kPrepareSmallCorpus, &out), 0) << out;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `cmd` in dir_ with the cluster's SLURM_CONF, zerotrain on PATH and one thread per rank.
  int run(const std::string& env, const std::string& cmd, std::string* out) const {
    return zt::testing::run_logged("cd " + dir_ + " && SLURM_CONF=" + cluster_ + "/slurm.conf PATH=" +
                                       zt::testing::binary_dir() + ":$PATH OMP_NUM_THREADS=1 " + env + cmd,
                                   dir_ + "/cmd.log", out);
  }
  void write_config(const std::string& name, const std::string& out_dir) const {
    std::ofstream(dir_ + "/" + name) << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "zero_optimization": {"stage": 2}, "model": {"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 32},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 6, "eval_interval": 0, "output_dir": ")" << out_dir << R"(", "save_at_end": false}})";
  }

  static int lock_fd_;
  static double start_s_;
  static std::string skip_reason_, cluster_;
  std::string dir_;
};

int Slurm::lock_fd_ = -1;
double Slurm::start_s_ = 0.0;
std::string Slurm::skip_reason_, Slurm::cluster_;

TEST_F(Slurm, SrunAcrossTwoNodesMatchesMpirunAndSbatchWorksAsWritten) {
  write_config("local.json", "local");
  write_config("srun.json", "srun");
  write_config("ds_config.json", "out");
  std::string local, srun, batch;
  ASSERT_EQ(run("", zt::testing::mpirun_prefix(4) + "zerotrain train --config local.json", &local), 0) << local;
  ASSERT_EQ(run("", "srun -N 2 --ntasks-per-node 2 --mpi=pmix zerotrain train --config srun.json", &srun), 0) << srun;
  EXPECT_NE(srun.find("hosts: 2 (zt-h1: ranks 0,1; zt-h2: ranks 2,3), placement from Slurm"), std::string::npos) << srun;
  const std::vector<std::string> a = csv_loss_hex(dir_ + "/local/metrics.csv"), b = csv_loss_hex(dir_ + "/srun/metrics.csv");
  ASSERT_EQ(a.size(), 6u) << local;
  EXPECT_EQ(a, b) << "srun's losses differ from mpirun's";
  // The example batch script, unchanged, from the directory holding ds_config.json.
  ASSERT_EQ(run("", "sbatch --wait " + source("docs/slurm/train.sbatch"), &batch), 0) << batch;
  const std::string job = batch.substr(batch.find_last_of(' ') + 1, batch.find_last_not_of("\n") - batch.find_last_of(' '));
  const std::string job_out = zt::testing::read_text(dir_ + "/zerotrain-" + job + ".out");
  EXPECT_NE(job_out.find("hosts: 2 (zt-h1: ranks 0,1; zt-h2: ranks 2,3), placement from Slurm"), std::string::npos)
      << batch << job_out;
  EXPECT_EQ(csv_loss_hex(dir_ + "/out/metrics.csv"), a) << job_out;
  std::printf("  cluster up in %.1f s; srun 2 nodes x 2 tasks and sbatch (job %s): 6 losses identical to mpirun's\n",
              start_s_, job.c_str());
}

}  // namespace
