// calibrate -> estimate -> plan end to end on a tiny model (one process, --quick): the
// calibration file is written, estimate predicts a step time and a per-host memory, a
// cluster across hosts without an inter-host calibration says what to run instead of
// guessing, plan ranks the layouts that fit and names what it refused, and a broken
// calibration file is a clean error naming the file; a GPU run is planned without a GPU,
// its offload priced from the calibration; an NVMe optimizer pass is priced once its swap
// directory is calibrated.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace {

struct CliRun {
  int code;
  std::string out, err;
};

class PlannerCli : public zt::testing::TempDirTest {
 protected:
  CliRun run(const std::string& args) {
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    const int s = std::system(("cd " + dir_ + " && OMP_NUM_THREADS=2 " + zt::testing::binary_dir() + "/zerotrain " +
                               args + " >" + out + " 2>" + err).c_str());
    return {WIFEXITED(s) ? WEXITSTATUS(s) : -1, zt::testing::read_text(out), zt::testing::read_text(err)};
  }
  // gpu.json: a bf16 GPU run with the optimizer offloaded to host memory.
  void write_gpu_config() {
  std::ofstream(dir_ + "/gpu.json") << R"({"train_batch_size": 2, "train_micro_batch_size_per_gpu": 2,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}},
    "training": {"device": "cuda"}, "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32},
    "data": {"tokenizer": "byte", "seq_len": 32}})";
  }
  // A calibration file's opening, up to its bf16 table of `seconds` (a JSON object); the
  // caller adds the rest and the closing brace.
  static std::string calibration_head(const std::string& seconds) {
    return R"({"format": "zerotrain-calibration/1", "links": {}, "process_base_bytes": 1e6,
      "mpi_process_base_bytes": 1e6, "mpi_inter_process_base_bytes": 1e6,
      "compute": [{"threads": 2, "concurrent_ranks": 1, "dtype": "bf16", "seconds": )" + seconds + "}]";
  }
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(dir_ + "/cfg.json") << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32},
      "data": {"tokenizer": "byte", "seq_len": 32}})";
  }
};

TEST_F(PlannerCli, CalibrateEstimatePlan) {
  CliRun r = run("calibrate --config cfg.json --quick --micro-batches 1,2,4 --tp 1,2 -o cal.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel calls; best GEMM"), std::string::npos) << r.out;
  auto cal = zt::parse_json_strict(zt::testing::read_text(dir_ + "/cal.json"), "cal.json");
  ASSERT_TRUE(cal.ok());
  EXPECT_GT((*cal)["process_base_bytes"].get<double>(), 0.0);
  EXPECT_GT((*cal)["compute"][0]["seconds"].size(), 20u);

  r = run("estimate --config cfg.json --calibration cal.json --hosts 1 --procs-per-host 2 --threads-per-rank 1 "
          "--mem-per-host 1GiB");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(": fits"), std::string::npos) << r.out;
  // One process calibrated no collectives: the dp 2 prediction says what to run.
  EXPECT_NE(r.out.find("not predicted: no calibration of all_reduce on the \"intra\" link"), std::string::npos) << r.out;

  r = run("estimate --config cfg.json --calibration cal.json --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_GT((*j)["step_s"].get<double>(), 0.0);
  EXPECT_GE((*j)["rank_bytes_max"].get<double>(), (*j)["base_bytes"].get<double>());
  EXPECT_EQ((*j)["extrapolated_ops"], 0) << r.out;  // every call of this model was calibrated

  r = run("plan --config cfg.json --calibration cal.json --hosts 1 --procs-per-host 1 --threads-per-rank 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1    dp1 pp1 tp1 z0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layouts considered"), std::string::npos) << r.out;
  r = run("plan --config cfg.json --calibration cal.json --hosts 1 --procs-per-host 1 --mem-per-host 1MB");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 fit"), std::string::npos) << r.out;
}

// A kernel call's workspace in the calibration (a GEMM library's packed operands,
// resident only while the call runs) adds to the rank's memory once: the largest among
// the step's calls (an unmeasured shape takes its kernel's nearest measured one).
TEST_F(PlannerCli, EstimateAddsTheStepsLargestKernelWorkspace) {
  const std::string head = R"({"format": "zerotrain-calibration/1", "links": {}, "process_base_bytes": 1e6,
    "mpi_process_base_bytes": 1e6, "mpi_inter_process_base_bytes": 1e6,
    "compute": [{"threads": 2, "concurrent_ranks": 1, "dtype": "fp32", "seconds": {"adamw 1000": 1e-4},
                 "workspace_bytes": {)";
  std::ofstream(dir_ + "/none.json") << head << "}}]}";
  std::ofstream(dir_ + "/ws.json") << head << R"("linear_forward 64 64 257": 3e6, "linear_backward 64 64 64": 1e6}}]})";
  auto estimate = [&](const char* cal) {
    const CliRun r = run(std::string("estimate --config cfg.json --threads-per-rank 2 --json --calibration ") + cal);
    EXPECT_EQ(r.code, 0) << r.err;
    auto j = zt::parse_json_strict(r.out, cal);
    EXPECT_TRUE(j.ok()) << r.out;
    return j.ok() ? *j : zt::Json();
  };
  const zt::Json without = estimate("none.json"), with = estimate("ws.json");
  EXPECT_EQ(without["workspace_bytes"].get<double>(), 0.0);
  EXPECT_EQ(with["workspace_bytes"].get<double>(), 3e6);
  EXPECT_DOUBLE_EQ(with["rank_bytes_max"].get<double>() - without["rank_bytes_max"].get<double>(), 3e6);
}

// calibrate --splits measures every split of this host (one mpirun each, ranks bound and
// timing at once); plan without --procs-per-host searches the splits of a host's cores,
// names the table each was priced from, and ends with the launch line of its first choice.
TEST_F(PlannerCli, PlanPicksRanksAndThreadsPerHost) {
  CliRun r = run("calibrate --config cfg.json --quick --micro-batches 2,4,8 --tp 1 --skip-comm --splits -o cal.json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto cal = zt::parse_json_strict(zt::testing::read_text(dir_ + "/cal.json"), "cal.json");
  ASSERT_TRUE(cal.ok());
  std::set<std::pair<int, int>> tables;  // (threads, concurrent ranks)
  for (const auto& t : (*cal)["compute"]) tables.insert({t["threads"].get<int>(), t["concurrent_ranks"].get<int>()});
  const int cores = static_cast<int>(tables.rbegin()->first);  // the 1-rank split runs every core
  EXPECT_TRUE(tables.count({cores, 1})) << r.out;
  if (cores % 2 == 0) EXPECT_TRUE(tables.count({cores / 2, 2})) << r.out;
  EXPECT_NE(r.out.find("calibrate: 1 rank x " + std::to_string(cores) + " thread"), std::string::npos) << r.out;

  r = run("plan --config cfg.json --calibration cal.json --cores-per-host 4 --sockets-per-host 2 --top 50");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 host(s) of 2 sockets, 4 cores, every split into ranks x threads (3)"), std::string::npos)
      << r.out;
  for (const char* split : {" 1 x 4 ", " 2 x 2 ", " 4 x 1 "}) EXPECT_NE(r.out.find(split), std::string::npos) << split;
  EXPECT_NE(r.out.find("run the first: zerotrain launch --num_procs "), std::string::npos) << r.out;
  r = run("plan --config cfg.json --calibration cal.json --cores-per-host 64 --json --top 1000");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "plan --json");
  ASSERT_TRUE(j.ok()) << r.out;
  std::set<int> ranks;
  for (const auto& l : (*j)["layouts"]) ranks.insert(l["procs_per_host"].get<int>());
  EXPECT_GT(ranks.size(), 1u) << r.out;
  r = run("plan --config cfg.json --calibration cal.json --hosts 1 --procs-per-host 1 --threads-per-rank 1000");
  ASSERT_EQ(r.code, 0) << r.err;  // a split no table has: priced from the nearest, and said so
  EXPECT_NE(r.out.find("the layout runs 1000 thread(s) per rank, 1 rank(s) a host: not calibrated at that split"),
            std::string::npos) << r.out;
  r = run("plan --config cfg.json --sockets-per-host 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sockets-per-host needs --cores-per-host"), std::string::npos) << r.err;
  r = run("plan --config cfg.json --cores-per-host 6 --sockets-per-host 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("the cores a multiple of the sockets"), std::string::npos) << r.err;
}

// A GPU run planned on a machine without one: estimate describes "device": "cuda" (no GPU
// opened), splits each rank's total into the device's and the host's part with optimizer
// offload, checks the host's part against the host's memory and the device's against
// --mem-per-device, and does not price the step from a calibration of CPU kernels; plan
// ranks such layouts by device memory.
TEST_F(PlannerCli, EstimatePlansAGpuRunWithOffloadWithoutAGpu) {
  write_gpu_config();
  CliRun r = run("estimate --config gpu.json --mem-per-host 1GiB");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("on the device (rank 0): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a multiple of 128 on a GPU"), std::string::npos) << r.out;
  r = run("estimate --config gpu.json --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  const zt::Json& stage = (*j)["stage_memory"][0];
  const double host = stage["host_bytes"].get<double>(), total = stage["total_bytes"].get<double>();
  EXPECT_GT(host, 0.0);
  EXPECT_DOUBLE_EQ((*j)["device_bytes_max"].get<double>(), total - host);
  EXPECT_DOUBLE_EQ((*j)["rank_bytes_max"].get<double>(), host);  // no calibration: no process base, no token files
  const double device = (*j)["device_bytes_max"].get<double>();

  // A calibration of this host's CPU kernels: a GPU run's step is not priced from them.
  std::ofstream(dir_ + "/cal.json") << calibration_head("{}") + "}";
  r = run("estimate --config gpu.json --calibration cal.json --mem-per-device " + std::to_string(device - 1) + "B");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("per device: largest rank"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time: not predicted: the calibration has no cuda bf16 compute table: run `zerotrain "
                       "calibrate --device cuda --precision bf16"), std::string::npos) << r.out;

  // plan ranks a GPU run by device memory, one rank per device, and drops what the card cannot hold.
  r = run("plan --config gpu.json --calibration cal.json --set train_batch_size=8 --mem-per-device " +
          std::to_string(device) + "B --json --top 100");
  ASSERT_EQ(r.code, 0) << r.err;
  j = zt::parse_json_strict(r.out, "plan --json");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_GT((*j)["too_big_device"].get<int>(), 0) << r.out;  // micro-batch 4 and 8 without checkpointing
  double last = 0.0;
  for (const auto& l : (*j)["layouts"]) {
    EXPECT_TRUE(l["on_device"].get<bool>());
    EXPECT_EQ(l["procs_per_host"].get<int>(), 1);
    EXPECT_TRUE(l["step_s"].is_null());
    EXPECT_LE(l["device_bytes_max"].get<double>(), device);
    EXPECT_GE(l["device_bytes_max"].get<double>(), last);
    last = l["device_bytes_max"].get<double>();
  }
  r = run("plan --config gpu.json --mem-per-device lots");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--mem-per-device: expected a size"), std::string::npos) << r.err;
}

// One GPU's step from a table of its kernels (calibrate --device cuda; here a CPU table
// relabelled, as no GPU is here): the same op list as on the CPU, priced from the cuda
// table; several GPUs are refused until NCCL is calibrated; with the optimizer on the host,
// the update is the offload pipeline's lower bound, not the device's AdamW.
TEST_F(PlannerCli, EstimatePricesOneGpusStepFromItsKernelTable) {
  write_gpu_config();
  std::ofstream(dir_ + "/gpu_plain.json") << R"({"train_batch_size": 2, "train_micro_batch_size_per_gpu": 2,
    "bf16": {"enabled": true}, "training": {"device": "cuda"},
    "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32}, "data": {"tokenizer": "byte", "seq_len": 32}})";
  std::ofstream(dir_ + "/shape.json") << R"({"train_batch_size": 2, "bf16": {"enabled": true},
    "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32}, "data": {"tokenizer": "byte", "seq_len": 32}})";
  CliRun r = run("calibrate --config shape.json --precision bf16 --quick --skip-comm --micro-batches 2 --tp 1 -o cpu.json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto cal = zt::parse_json_strict(zt::testing::read_text(dir_ + "/cpu.json"), "cpu.json");
  ASSERT_TRUE(cal.ok());
  zt::Json gpu_table = (*cal)["compute"][0];  // the host's table stays: offload's host update is priced from it
  gpu_table["device"] = "cuda";
  (*cal)["compute"].push_back(gpu_table);
  (*cal)["device_link"] = {{"device", "NVIDIA H200"}, {"h2d_bytes_per_s", 55e9}, {"d2h_bytes_per_s", 50e9}};
  std::ofstream(dir_ + "/gpu.cal.json") << cal->dump();
  r = run("estimate --config gpu_plain.json --calibration gpu.cal.json --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  ASSERT_FALSE((*j)["step_s"].is_null()) << r.out;
  const zt::Json& b = (*j)["breakdown"];
  EXPECT_NEAR((*j)["step_s"].get<double>(), b["compute_s"].get<double>() + b["optimizer_s"].get<double>(), 1e-12);
  r = run("estimate --config gpu_plain.json --calibration gpu.cal.json");
  EXPECT_NE(r.out.find("assumes compute: kernel times measured on the GPU (NVIDIA H200)"), std::string::npos) << r.out;
  r = run("estimate --config gpu_plain.json --calibration gpu.cal.json --set 'training.attention=\"flash\"'");
  EXPECT_NE(r.out.find("on device cuda the backend picks flash attention itself"), std::string::npos) << r.out + r.err;
  r = run("plan --config gpu_plain.json --calibration gpu.cal.json --top 3");  // one GPU: timed, its assumptions shown
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("step times: not predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("assumes compute: kernel times measured on the GPU"), std::string::npos) << r.out;
  r = run("estimate --config gpu_plain.json --calibration gpu.cal.json --world 2 --set train_batch_size=4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step time: not predicted: the collectives of several GPUs (NCCL) are not calibrated"),
            std::string::npos) << r.out;

  r = run("estimate --config gpu.json --calibration gpu.cal.json --json");  // the optimizer offloaded to the host
  ASSERT_EQ(r.code, 0) << r.err;
  j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  ASSERT_FALSE((*j)["step_s"].is_null()) << r.out;
  const double host = std::max((*j)["offload_update_s"].get<double>(), (*j)["offload_pcie_s"].get<double>());
  EXPECT_DOUBLE_EQ((*j)["breakdown"]["optimizer_s"].get<double>(), host);
}

// Optimizer offload on a GPU, priced before launch: the host update of the rank's optimizer
// range from the calibrated host AdamW (scaled by size from the measured call) and its PCIe
// bytes at the slower of the pinned rates calibrate measured on the GPU machine; without
// those rates, the PCIe part says what to run.
TEST_F(PlannerCli, EstimatePricesOffloadFromTheHostAdamWAndThePinnedRates) {
  write_gpu_config();
  const std::string head = calibration_head(R"({"adamw 1000000": 0.01})");
  std::ofstream(dir_ + "/cal.json") << head + R"(, "device_link": {"device": "NVIDIA H200", "h2d_bytes_per_s": 55e9,
    "d2h_bytes_per_s": 50e9}})";
  CliRun r = run("estimate --config gpu.json --calibration cal.json --threads-per-rank 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  const zt::Json& m = (*j)["stage_memory"][0];
  EXPECT_NEAR((*j)["offload_update_s"].get<double>(), m["optimizer_bytes"].get<double>() / 8 / 1e6 * 0.01, 1e-12);
  EXPECT_NEAR((*j)["offload_pcie_s"].get<double>(), m["pcie_bytes_per_step"].get<double>() / 50e9, 1e-15);
  r = run("estimate --config gpu.json --calibration cal.json --threads-per-rank 2");
  EXPECT_NE(r.out.find("the pipeline overlaps them, so offload adds"), std::string::npos) << r.out;

  std::ofstream(dir_ + "/cal.json") << head + "}";  // calibrated where there is no GPU
  r = run("estimate --config gpu.json --calibration cal.json --threads-per-rank 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_GT((*j)["offload_update_s"].get<double>(), 0.0);
  EXPECT_TRUE((*j)["offload_pcie_s"].is_null());
  r = run("estimate --config gpu.json --calibration cal.json --threads-per-rank 2");
  EXPECT_NE(r.out.find("PCIe not calibrated (run `zerotrain calibrate` on the GPU machine"), std::string::npos) << r.out;

  std::ofstream(dir_ + "/cal.json") << head + R"(, "device_link": {"device": "NVIDIA H200", "h2d_bytes_per_s": 0,
    "d2h_bytes_per_s": 50e9}})";
  r = run("estimate --config gpu.json --calibration cal.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cal.json: /device_link/h2d_bytes_per_s: expected a finite number >= 1"), std::string::npos)
      << r.err;
}

// The optimizer state on NVMe: a swap directory never measured is refused with the command
// that measures it; calibrate measures it through a config that names it, and estimate
// prices the optimizer pass over it (planner/swap_model.h).
TEST_F(PlannerCli, EstimatePricesTheNvmeOptimizerPassOnceTheDirectoryIsCalibrated) {
  std::ofstream(dir_ + "/nvme.json") << R"({"train_batch_size": 2, "train_micro_batch_size_per_gpu": 2,
    "zero_optimization": {"stage": 0, "sub_group_size": 20000,
                          "offload_optimizer": {"device": "nvme", "nvme_path": "swap"}},
    "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32},
    "data": {"tokenizer": "byte", "seq_len": 32}})";
  CliRun r = run("calibrate --config cfg.json --quick --skip-comm --micro-batches 2 --tp 1 -o cal.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("swap directory"), std::string::npos) << r.out;  // nothing asked for one
  r = run("estimate --config nvme.json --calibration cal.json --threads-per-rank 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step time: not predicted: the swap directory swap ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run `zerotrain calibrate --nvme-path swap` on this machine"), std::string::npos) << r.out;

  r = run("calibrate --config nvme.json --quick --skip-comm --skip-compute -o cal.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("swap directory " + dir_ + "/swap: write "), std::string::npos) << r.out;
  r = run("estimate --config nvme.json --calibration cal.json --threads-per-rank 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  ASSERT_FALSE((*j)["step_s"].is_null()) << r.out;
  EXPECT_GT((*j)["breakdown"]["swap_disk_s"].get<double>(), 0.0);
  r = run("estimate --config nvme.json --calibration cal.json --threads-per-rank 2");
  EXPECT_NE(r.out.find("assumes NVMe offload: the optimizer pass over swap at its calibrated"), std::string::npos)
      << r.out;

  // A GPU run with its optimizer on NVMe: the host update is the pass over the directory.
  std::ofstream(dir_ + "/gpu_nvme.json") << R"({"train_batch_size": 2, "train_micro_batch_size_per_gpu": 2,
    "bf16": {"enabled": true}, "zero_optimization": {"stage": 0, "sub_group_size": 20000,
    "offload_optimizer": {"device": "nvme", "nvme_path": "swap"}}, "training": {"device": "cuda"},
    "model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_positions": 32}, "data": {"tokenizer": "byte", "seq_len": 32}})";
  const std::string head = calibration_head(R"({"adamw 1000000": 0.01})");
  std::ofstream(dir_ + "/gpu_cal.json") << head + "}";
  r = run("estimate --config gpu_nvme.json --calibration gpu_cal.json --threads-per-rank 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("not priced: the swap directory swap ("), std::string::npos) << r.out;
  std::ofstream(dir_ + "/gpu_cal.json") << head + R"(, "disks": {")" + dir_ + R"(/swap": {"write_bytes_per_s": 1e9,
    "mixed_bytes_per_s": 2e9, "checksum_bytes_per_s": 1e10, "direct": true}}})";
  r = run("estimate --config gpu_nvme.json --calibration gpu_cal.json --threads-per-rank 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = zt::parse_json_strict(r.out, "estimate --json");
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_GT((*j)["offload_disk_s"].get<double>(), 0.0);
  EXPECT_GT((*j)["offload_update_s"].get<double>(), (*j)["offload_disk_s"].get<double>());  // + the update, checksums
}

TEST_F(PlannerCli, BadArgumentsAndFilesAreCleanErrors) {
  std::ofstream(dir_ + "/bad.json") << R"({"format": "something else"})";
  CliRun r = run("estimate --config cfg.json --calibration bad.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json: /format: expected \"zerotrain-calibration/1\""), std::string::npos) << r.err;
  r = run("estimate --config cfg.json --hosts 2 --procs-per-host 2 --world 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--world 3 is not --hosts x --procs-per-host = 4"), std::string::npos) << r.err;
  r = run("plan --config cfg.json --mem-per-host lots");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--mem-per-host: expected a size"), std::string::npos) << r.err;
  r = run("calibrate --precision fp8 -o x.json");
  EXPECT_EQ(r.code, 2);
}

}  // namespace
