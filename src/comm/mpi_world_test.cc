// launched_by_mpi reads the launchers' environment variables (MPI itself is exercised
// under mpirun by tests/comm/comm_mpi_test.cc: this process never initialises it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "comm/mpi_world.h"

namespace zt {
namespace {

TEST(CommMpiWorld, LaunchedByMpiReadsTheLauncherEnvironment) {
  const char* vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
  for (const char* v : vars) {
    if (std::getenv(v) != nullptr) GTEST_SKIP() << "this test runs under an MPI launcher";
  }
  EXPECT_FALSE(launched_by_mpi());
  for (const char* v : vars) {
    ::setenv(v, "2", 1);
    EXPECT_TRUE(launched_by_mpi()) << v;
    ::unsetenv(v);
  }
  EXPECT_FALSE(launched_by_mpi());
}

}  // namespace
}  // namespace zt
