// Test helpers for tests that run zerotrain's programs: where the test binary's sibling
// executables are (drivers, the zerotrain CLI), the mpirun prefix every multi-rank test
// uses (root allowed, oversubscribed, shared memory only, one thread per rank), and a
// shell run that captures the combined output. Header-only, tests only.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace zt::testing {

// The directory of the running test binary (the build directory).
inline std::string binary_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string exe(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return exe.substr(0, exe.rfind('/'));
}

inline std::string mpirun_prefix(int np) {
  return std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 mpirun ") +
         "--oversubscribe --mca btl self,vader -np " + std::to_string(np) + " ";
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `command` through the shell with stdout and stderr into `log`; returns the exit
// status (or -1) and fills *output with the log's contents.
inline int run_logged(const std::string& command, const std::string& log, std::string* output) {
  const int status = std::system((command + " > " + log + " 2>&1").c_str());
  *output = read_text(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace zt::testing
