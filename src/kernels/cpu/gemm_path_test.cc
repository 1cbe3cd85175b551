// GemmPath: the core-name table, the rule that routes around an unsound OpenBLAS core,
// and ZT_GEMM. The OpenBLAS core of this process is fixed when the library loads, so the
// forced-core behaviour is tested end to end by running binaries under
// OPENBLAS_CORETYPE (tests/cli/doctor_test.cc, bench/train_step.sh); here the rule is
// checked against whatever core this process got.
#include "kernels/cpu/gemm_path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace zt {
namespace {

TEST(GemmPath, CoreNamesMapToTheirKernelIsa) {
  EXPECT_EQ(openblas_core_isa("SkylakeX"), Isa::kAvx512);
  EXPECT_EQ(openblas_core_isa("Cooperlake"), Isa::kAvx512);
  EXPECT_EQ(openblas_core_isa("SapphireRapids"), Isa::kAvx512);
  EXPECT_EQ(openblas_core_isa("Haswell"), Isa::kAvx2);
  EXPECT_EQ(openblas_core_isa("Zen"), Isa::kAvx2);
  for (const char* old : {"Prescott", "Nehalem", "Sandybridge", "Core2", "Barcelona", "Bulldozer", "unknown"}) {
    EXPECT_EQ(openblas_core_isa(old), Isa::kScalar) << old;
  }
  EXPECT_EQ(openblas_core_for(Isa::kAvx512, true), "Cooperlake");
  EXPECT_EQ(openblas_core_for(Isa::kAvx512, false), "SkylakeX");
  EXPECT_EQ(openblas_core_for(Isa::kAvx2, false), "Haswell");
}

TEST(GemmPath, RuleFollowsSoundness) {
  StatusOr<GemmPath> p = select_gemm_path();
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->openblas_sound(), static_cast<int>(p->openblas_core_isa) >= static_cast<int>(p->cpu_isa));
  if (p->policy != GemmPolicy::kAuto) GTEST_SKIP() << "ZT_GEMM set";
  EXPECT_EQ(p->backward, GemmLibrary::kOneDnn);
  const GemmLibrary blas = p->openblas_sound() ? GemmLibrary::kOpenBlas : GemmLibrary::kOneDnn;
  EXPECT_EQ(p->forward, blas);
  EXPECT_EQ(p->inner, blas);
  EXPECT_FALSE(p->uses_slow_core());
  EXPECT_EQ(p->warning().empty(), p->openblas_sound());
  if (!p->openblas_sound()) {
    EXPECT_NE(p->warning().find("OPENBLAS_CORETYPE=" + p->suggested_core), std::string::npos) << p->warning();
  }
}

// A BLAS with a pool of its own (core/threads.h) is held at one thread: auto routes every
// shape to oneDNN, whatever the core; ZT_GEMM=openblas is honoured and named as slow.
TEST(GemmPath, BlasOfItsOwnThreadsIsRoutedAround) {
  GemmPath p = gemm_path_for(GemmPolicy::kAuto);
  p.cpu_isa = p.openblas_core_isa;  // a sound core
  p.blas = BlasThreading::kPthreads;
  route_gemms(&p);
  EXPECT_EQ(p.forward, GemmLibrary::kOneDnn);
  EXPECT_EQ(p.backward, GemmLibrary::kOneDnn);
  EXPECT_EQ(p.inner, GemmLibrary::kOneDnn);
  EXPECT_FALSE(p.uses_held_blas());
  EXPECT_NE(p.warning().find("held at 1 thread"), std::string::npos) << p.warning();
  EXPECT_NE(p.describe().find("pthreads (held at 1 thread)"), std::string::npos) << p.describe();
  p.policy = GemmPolicy::kOpenBlas;
  route_gemms(&p);
  EXPECT_TRUE(p.uses_held_blas());
  EXPECT_NE(p.warning().find("GEMMs run on that one thread because ZT_GEMM=openblas"), std::string::npos) << p.warning();
  p.blas = BlasThreading::kOpenMp;
  p.policy = GemmPolicy::kAuto;
  route_gemms(&p);
  EXPECT_EQ(p.forward, GemmLibrary::kOpenBlas);
  EXPECT_TRUE(p.warning().empty()) << p.warning();
  EXPECT_FALSE(p.onednn_own_pool());
  p.onednn_runtime = "TBB";
  EXPECT_TRUE(p.onednn_own_pool());
}

TEST(GemmPath, ZtGemmOverridesAndRefusesUnknownValues) {
  const char* saved = std::getenv("ZT_GEMM");
  const std::string keep = saved != nullptr ? saved : "";
  setenv("ZT_GEMM", "onednn", 1);
  StatusOr<GemmPath> d = select_gemm_path();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->forward, GemmLibrary::kOneDnn);
  EXPECT_EQ(d->inner, GemmLibrary::kOneDnn);
  setenv("ZT_GEMM", "openblas", 1);
  StatusOr<GemmPath> o = select_gemm_path();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->backward, GemmLibrary::kOpenBlas);
  EXPECT_EQ(o->uses_slow_core(), !o->openblas_sound());
  setenv("ZT_GEMM", "mkl", 1);
  StatusOr<GemmPath> bad = select_gemm_path();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ZT_GEMM=mkl"), std::string::npos);
  EXPECT_NE(bad.status().message().find("auto, openblas or onednn"), std::string::npos);
  if (saved != nullptr) {
    setenv("ZT_GEMM", keep.c_str(), 1);
  } else {
    unsetenv("ZT_GEMM");
  }
}

}  // namespace
}  // namespace zt
