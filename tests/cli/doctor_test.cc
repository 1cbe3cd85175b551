// `zerotrain doctor` end to end: on this machine with zerotrain's knobs unset it prints
// every section and exits 0; a bad ZT_GEMM or ZT_ISA, GEMMs forced onto an old OpenBLAS
// core, and more threads than CPUs each exit 1 with the fix in the problems list; an old
// OpenBLAS core that zerotrain routes around is only a warning (exit 0), and so is
// OpenBLAS's pthreads build, held at one thread with every GEMM on oneDNN (issue 32);
// nested OpenMP would oversubscribe and exits 1. Each run uses a
// 0.05 s GEMM probe so the whole suite takes a few seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "cli/doctor_cuda.h"
#include "core/cpu_features.h"
#include "core/cpu_info.h"
#include "kernels/cpu/gemm_path.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace {

struct DoctorRun {
  int code;
  std::string out;
};

class Doctor : public zt::testing::TempDirTest {
 protected:
  // Runs the doctor with zerotrain's and OpenBLAS's knobs unset, at most 2 threads (no
  // more than this machine's CPUs), then `env` ("NAME=value ..."), which wins.
  DoctorRun run(const std::string& env) {
    const int threads = std::min(2, zt::cpu_info().logical_cpus);
    const std::string command = "env -u ZT_GEMM -u ZT_ISA -u OPENBLAS_CORETYPE -u OPENBLAS_NUM_THREADS OMP_NUM_THREADS=" +
                                std::to_string(threads) + " " + env + " " + zt::testing::binary_dir() +
                                "/zerotrain doctor --gemm-seconds 0.05 --output-dir " + dir_ + "/out";
    std::system(("mkdir -p " + dir_ + "/out").c_str());
    DoctorRun r;
    r.code = zt::testing::run_logged(command, dir_ + "/log", &r.out);
    return r;
  }
};

// The text after `heading` (e.g. "\nproblems:\n"), or "" when it is absent.
std::string section(const std::string& out, const std::string& heading) {
  const size_t at = out.find(heading);
  return at == std::string::npos ? "" : out.substr(at + heading.size());
}

std::string suggested_core() {
  return zt::openblas_core_for(zt::detect_isa(), zt::cpu_info().avx512_bf16);
}

TEST_F(Doctor, DefaultEnvironmentPrintsEverySectionAndPasses) {
  const DoctorRun r = run("");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("zerotrain doctor", 0), 0u) << r.out;
  for (const char* label : {"cpu", "topology", "isa", "amx", "gemm path", "openblas", "onednn", "gemm speed", "bf16 gemm", "mpi",
                            "mpi transports", "cuda", "huge pages", "threads", "io", "memory", "disk"}) {
    EXPECT_NE(r.out.find(std::string("\n") + label + " "), std::string::npos) << "no '" << label << "' line\n" << r.out;
  }
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nno problems found\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nproblems:\n"), std::string::npos) << r.out;
}

TEST_F(Doctor, InvalidZtGemmIsAProblemNamingTheAllowedValues) {
  const DoctorRun r = run("ZT_GEMM=bogus");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string problems = section(r.out, "\nproblems:\n");
  EXPECT_NE(problems.find("ZT_GEMM=bogus"), std::string::npos) << r.out;
  EXPECT_NE(problems.find("auto, openblas or onednn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not measured: ZT_GEMM is invalid"), std::string::npos) << r.out;
}

TEST_F(Doctor, InvalidZtIsaIsAProblem) {
  const DoctorRun r = run("ZT_ISA=bogus");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string problems = section(r.out, "\nproblems:\n");
  EXPECT_NE(problems.find("ZT_ISA=bogus"), std::string::npos) << r.out;
  EXPECT_NE(problems.find("unset ZT_ISA"), std::string::npos) << r.out;
}

TEST_F(Doctor, OldOpenBlasCoreRoutedAroundIsOnlyAWarning) {
  if (zt::detect_isa() == zt::Isa::kScalar) GTEST_SKIP() << "Prescott is this CPU's own level";
  const DoctorRun r = run("OPENBLAS_CORETYPE=Prescott");
  EXPECT_EQ(r.code, 0) << r.out;
  const std::string warnings = section(r.out, "\nwarnings:\n");
  EXPECT_NE(warnings.find("Prescott"), std::string::npos) << r.out;
  EXPECT_NE(warnings.find("OPENBLAS_CORETYPE=" + suggested_core()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nno problems found\n"), std::string::npos) << r.out;
}

TEST_F(Doctor, GemmsForcedOntoTheOldCoreAreAProblemWithTheFix) {
  if (zt::detect_isa() == zt::Isa::kScalar) GTEST_SKIP() << "Prescott is this CPU's own level";
  const DoctorRun r = run("OPENBLAS_CORETYPE=Prescott ZT_GEMM=openblas");
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string problems = section(r.out, "\nproblems:\n");
  EXPECT_NE(problems.find("Prescott"), std::string::npos) << r.out;
  EXPECT_NE(problems.find("unset ZT_GEMM"), std::string::npos) << r.out;
  EXPECT_NE(problems.find("OPENBLAS_CORETYPE=" + suggested_core()), std::string::npos) << r.out;
}

// Debian's pthreads OpenBLAS (libopenblas0-pthread), loaded ahead of the linked OpenMP build.
constexpr const char* kPthreadBlas = "/usr/lib/x86_64-linux-gnu/openblas-pthread";

TEST_F(Doctor, PthreadsOpenBlasIsHeldAtOneThreadAndNamed) {
  if (::access((std::string(kPthreadBlas) + "/libopenblas.so.0").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "libopenblas0-pthread is not installed";
  }
  const DoctorRun r = run(std::string("LD_LIBRARY_PATH=") + kPthreadBlas);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("OpenBLAS (pthreads build) 1 thread (held: its pool is its own)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("onednn for X.W^T, onednn for dY.W and dY^T.X, onednn for per-head GEMMs"), std::string::npos)
      << r.out;
  EXPECT_NE(section(r.out, "\nwarnings:\n").find("libopenblas0-openmp"), std::string::npos) << r.out;
}

TEST_F(Doctor, NestedOpenMpIsAProblem) {
  if (zt::cpu_info().logical_cpus < 2) GTEST_SKIP() << "one CPU: one thread";
  const DoctorRun r = run("OMP_MAX_ACTIVE_LEVELS=2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(section(r.out, "\nproblems:\n").find("nested OpenMP"), std::string::npos) << r.out;
}

TEST_F(Doctor, MoreThreadsThanCpusIsAProblem) {
  const int cpus = zt::cpu_info().logical_cpus;
  const DoctorRun r = run("OMP_NUM_THREADS=" + std::to_string(cpus + 1));
  EXPECT_EQ(r.code, 1) << r.out;
  const std::string problems = section(r.out, "\nproblems:\n");
  EXPECT_NE(problems.find("oversubscribe"), std::string::npos) << r.out;
  EXPECT_NE(problems.find("OMP_NUM_THREADS"), std::string::npos) << r.out;
}

// doctor's "cuda ranks" line (printed on a machine with a GPU): NCCL with a GPU per rank,
// and the host-staged slow path named where the machine forces it.
TEST(DoctorCuda, NamesHowSeveralRanksCommunicate) {
  EXPECT_EQ(zt::describe_cuda_ranks(0, 1),
            "several ranks: no NCCL here, so collectives stage through host memory (slow: each waits for the GPU and "
            "crosses the bus twice)");
  const std::string old = zt::describe_cuda_ranks(22809, 1);
  EXPECT_NE(old.find("NCCL 2.28.9 with a GPU each, up to 1 per host"), std::string::npos) << old;
  EXPECT_NE(old.find("stage through host memory"), std::string::npos) << old;
  const std::string now = zt::describe_cuda_ranks(23001, 8);
  EXPECT_NE(now.find("NCCL 2.30.1, up to 8 per host"), std::string::npos) << now;
  EXPECT_NE(now.find("NCCL_MULTI_RANK_GPU_ENABLE=1"), std::string::npos) << now;
}

}  // namespace
