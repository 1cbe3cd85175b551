// The calibration cache: a JSON round trip, errors that name the file and the pointer,
// pricing by exact shape or extrapolated from the same kernel's nearest measured work,
// the table with the nearest thread count, and merging of re-measured tables.
#include "planner/calibration.h"

#include <gtest/gtest.h>

#include "io/atomic_file.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

Calibration sample() {
  Calibration c;
  c.cpu = "test cpu";
  c.isa = "avx2";
  c.cores = 2;
  c.process_base_bytes = 30e6;
  c.mpi_process_base_bytes = 40e6;
  c.mpi_inter_process_base_bytes = 50e6;
  ComputeTable t;
  t.threads = 2;
  t.seconds["linear_forward 64 32 32"] = 1e-4;     // 131072 flops
  t.seconds["linear_forward 1024 32 32"] = 8e-4;   // 2097152 flops
  t.seconds["adamw 1048576"] = 2e-4;
  t.slowest_seconds["linear_forward 64 32 32"] = 1.5e-4;  // the slower of the ranks
  t.workspace_bytes["linear_forward 1024 32 32"] = 2e6;   // the GEMM library's packed operands
  c.compute.push_back(t);
  c.links["intra"]["all_reduce"] = CollectiveFit{5e-6, 1e-10, 2, 0.1, {{4096, 1e-5}, {65536, 2e-5}},
                                                 {{16384, 1.4e-5}}};
  c.device_link = {"NVIDIA H200", 55.4e9, 55.3e9};
  c.disks["/nvme/swap"] = {1.9e9, 3.1e9, 20e9, true, "io_uring", 1e9, 4};
  return c;
}

class CalibrationFile : public zt::testing::TempDirTest {};

TEST_F(CalibrationFile, RoundTrip) {
  const std::string path = dir_ + "/sub/cal.json";
  ASSERT_TRUE(save_calibration(path, sample()).ok());
  auto back = load_calibration(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(calibration_to_json(*back), calibration_to_json(sample()));
  ASSERT_EQ(back->compute.size(), 1u);
  EXPECT_EQ(back->compute[0].slowest_seconds.at("linear_forward 64 32 32"), 1.5e-4);
  EXPECT_EQ(back->compute[0].workspace_bytes.at("linear_forward 1024 32 32"), 2e6);
  EXPECT_EQ(back->device_link.device, "NVIDIA H200");
  EXPECT_EQ(back->device_link.d2h_bytes_per_s, 55.3e9);
  ASSERT_NE(back->disk("/nvme/swap/"), nullptr);  // the same directory spelled with a slash
  EXPECT_EQ(back->disk("/nvme/./swap")->mixed_bytes_per_s, 3.1e9);
  EXPECT_EQ(back->disk("/nvme/swap")->probe_chunks, 4u);
  EXPECT_EQ(back->disk("/nvme/other"), nullptr);
  EXPECT_EQ(back->base_bytes(1), 30e6);
  EXPECT_EQ(back->base_bytes(4), 40e6);
  EXPECT_EQ(back->base_bytes(4, 2), 50e6);  // peers on other hosts: the TCP figure
  Calibration only_inter = *back;
  only_inter.mpi_process_base_bytes = 0;
  EXPECT_EQ(only_inter.base_bytes(4, 1), 50e6);  // the nearest measured
}

TEST_F(CalibrationFile, ErrorsNameTheFileAndThePointer) {
  EXPECT_EQ(load_calibration(dir_ + "/none.json").status().code(), StatusCode::kNotFound);
  const struct {
    const char* edit;
    const char* message;
  } cases[] = {
      {R"(/format)", "cal.json: /format: expected \"zerotrain-calibration/1\""},
      {R"(/compute/0/seconds/linear_forward 64 32 32)", "/compute/0/seconds/linear_forward 64 32 32: expected seconds > 0"},
      {R"(/links/intra/all_reduce/alpha_s)", "/links/intra/all_reduce/alpha_s: expected a number"},
      {R"(/compute/0/workspace_bytes/linear_forward 1024 32 32)",
       "/compute/0/workspace_bytes/linear_forward 1024 32 32: expected bytes > 0"},
  };
  for (const auto& c : cases) {
    Json j = calibration_to_json(sample());
    j[Json::json_pointer(c.edit)] = "x";
    const std::string path = dir_ + "/cal.json";
    ASSERT_TRUE(write_file_atomic(path, j.dump()).ok());
    const Status s = load_calibration(path).status();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.to_string();
  }
  Json j = calibration_to_json(sample());
  j["compute"][0]["seconds"]["matmul 1 2 3"] = 1.0;
  EXPECT_NE(calibration_from_json(j, "f").status().message().find("not a kernel call"), std::string::npos);
}

TEST(Calibration, PricesExactOrFromTheNearestShape) {
  const Calibration c = sample();
  const ComputeTable& t = c.compute[0];
  OpCall o;
  ASSERT_TRUE(parse_op_key("linear_forward 64 32 32", &o));
  double s = 0;
  bool exact = false;
  ASSERT_TRUE(t.price(o, &s, &exact));
  EXPECT_TRUE(exact);
  EXPECT_EQ(s, 1e-4);
  // 2 x the work of the small shape, 1/8 of the large one: priced at the small one's rate.
  ASSERT_TRUE(parse_op_key("linear_forward 128 32 32", &o));
  ASSERT_TRUE(t.price(o, &s, &exact));
  EXPECT_FALSE(exact);
  EXPECT_DOUBLE_EQ(s, 2e-4);
  ASSERT_TRUE(parse_op_key("linear_forward 4096 32 32", &o));  // nearest: the large one
  ASSERT_TRUE(t.price(o, &s, &exact));
  EXPECT_DOUBLE_EQ(s, 3.2e-3);
  ASSERT_TRUE(parse_op_key("gelu_forward 100", &o));  // no gelu measured at all
  EXPECT_FALSE(t.price(o, &s, &exact));
}

// A call's workspace: as measured at its shape, else the nearest measured shape of the same
// kernel as it is (a GEMM library's packing buffer does not grow with the work), else none.
TEST(Calibration, WorkspaceExactOrFromTheNearestShape) {
  const ComputeTable& t = sample().compute[0];
  OpCall o;
  ASSERT_TRUE(parse_op_key("linear_forward 1024 32 32", &o));
  EXPECT_EQ(t.workspace(o), 2e6);
  ASSERT_TRUE(parse_op_key("linear_forward 4096 32 32", &o));
  EXPECT_EQ(t.workspace(o), 2e6);
  ASSERT_TRUE(parse_op_key("linear_backward 1024 32 32", &o));  // none measured for that kernel
  EXPECT_EQ(t.workspace(o), 0.0);
  ComputeTable merged;
  merged.workspace_bytes["linear_forward 64 32 32"] = 1e5;
  Calibration c = sample();
  merged.threads = 2;
  c.put(merged);
  EXPECT_EQ(c.compute[0].workspace_bytes.size(), 2u);
}

TEST(Calibration, NearestThreadsAndMerging) {
  Calibration c = sample();
  ComputeTable one;
  one.threads = 1;
  one.seconds["adamw 1048576"] = 4e-4;
  c.put(one);
  EXPECT_EQ(c.table(1, 1, "fp32")->threads, 1);
  EXPECT_EQ(c.table(8, 1, "fp32")->threads, 2);
  EXPECT_EQ(c.table(2, 1, "bf16"), nullptr);
  // The same threads measured with 1 and 2 ranks at once: the concurrency nearest the
  // layout's ranks on a host, the busier one on a tie.
  ComputeTable two = one;
  two.concurrent_ranks = 2;
  two.seconds["adamw 1048576"] = 5e-4;
  c.put(two);
  EXPECT_EQ(c.table(1, 1, "fp32")->concurrent_ranks, 1);
  EXPECT_EQ(c.table(1, 2, "fp32")->concurrent_ranks, 2);
  EXPECT_EQ(c.table(1, 16, "fp32")->concurrent_ranks, 2);
  EXPECT_EQ(c.table(2, 2, "fp32")->threads, 2);  // threads first
  c.compute.pop_back();
  ComputeTable again = one;
  again.seconds.clear();
  again.seconds["adamw 4194304"] = 1e-3;
  c.put(again);  // same threads, ranks and dtype: merged
  EXPECT_EQ(c.compute.size(), 2u);
  EXPECT_EQ(c.table(1, 1, "fp32")->seconds.size(), 2u);
  EXPECT_NE(c.fit("intra", Collective::kAllReduce), nullptr);
  EXPECT_EQ(c.fit("inter", Collective::kAllReduce), nullptr);
  // A GPU's table (calibrate --device cuda) is its own: never merged with, nor picked for, the host's.
  ComputeTable gpu = one;
  gpu.device = "cuda";
  gpu.seconds = {{"adamw 1048576", 1e-5}};
  c.put(gpu);
  EXPECT_EQ(c.compute.size(), 3u);
  EXPECT_EQ(c.table(1, 1, "fp32", "cuda")->seconds.at("adamw 1048576"), 1e-5);
  EXPECT_EQ(c.table(1, 1, "fp32")->device, "cpu");
  EXPECT_EQ(c.table(1, 1, "bf16", "cuda"), nullptr);
  auto back = calibration_from_json(calibration_to_json(c), "cal.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_NE(back->table(1, 1, "fp32", "cuda"), nullptr);
  Json bad = calibration_to_json(c);
  bad["compute"][2]["device"] = "tpu";
  EXPECT_NE(calibration_from_json(bad, "cal.json").status().message().find("cal.json: /compute/2/device: expected \"cpu\" or \"cuda\""),
            std::string::npos);
}

}  // namespace
}  // namespace zt
