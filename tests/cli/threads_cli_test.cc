// No oversubscription (issue 32): `zerotrain train --demo` at training.threads 2 under
// OpenBLAS's OpenMP build (the one zerotrain links) and its pthreads build (Debian's
// libopenblas0-pthread, loaded ahead of it through LD_LIBRARY_PATH; skipped where it is not
// installed), each with ZT_GEMM=openblas and ZT_GEMM=onednn. While it trains, the test reads
// /proc/PID/task/*/stat every half millisecond and counts the compute threads running or
// waiting to run: every thread but the communication and I/O threads (named zt-comm and
// zt-io). The most at any sample never exceeds training.threads. Without core/threads.h's
// hold, the pthreads build runs a pool of its own (OPENBLAS_NUM_THREADS unset: one thread
// per CPU) beside the OpenMP threads, which spin between parallel loops: 3 here most of the
// time, with ZT_GEMM=onednn too (the pool's threads spin after each call and at start-up).
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace {

constexpr const char* kPthreadBlas = "/usr/lib/x86_64-linux-gnu/openblas-pthread";
constexpr int kThreads = 2;

// Compute threads of `pid` in state R (running or runnable) now.
int runnable_compute_threads(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = dir + "/" + e->d_name;
    std::string name, stat;
    std::getline(std::ifstream(task + "/comm"), name);
    if (name == "zt-comm" || name == "zt-io") continue;
    std::getline(std::ifstream(task + "/stat"), stat);
    const size_t close = stat.rfind(')');  // the state follows the parenthesised name
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'R') ++n;
  }
  ::closedir(d);
  return n;
}

struct Sampled {
  int code = -1;
  int most = 0;     // compute threads runnable at once, at most
  int samples = 0;
};

class ThreadsCli : public zt::testing::TempDirTest {
 protected:
  // Trains the demo for a few steps with `env` ("NAME=value" each) added.
  Sampled train(const std::vector<std::string>& env) {
    const std::string exe = zt::testing::binary_dir() + "/zerotrain", log = dir_ + "/log";
    std::fflush(nullptr);  // the child must not write the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (const char* v : {"ZT_GEMM", "ZT_ISA", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "LD_LIBRARY_PATH"}) ::unsetenv(v);
      for (const std::string& e : env) ::putenv(::strdup(e.c_str()));
      if (std::freopen(log.c_str(), "w", stdout) == nullptr || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
      const std::string out = "training.output_dir=" + dir_ + "/out", threads = "training.threads=" + std::to_string(kThreads);
      ::execl(exe.c_str(), "zerotrain", "train", "--demo", "--set", "training.steps=4", "--set", threads.c_str(), "--set",
              "training.eval_interval=0", "--set", "training.sample_tokens=0", "--set", "training.save_at_end=false",
              "--set", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    Sampled s;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      s.most = std::max(s.most, runnable_compute_threads(pid));
      ++s.samples;
      ::usleep(500);
    }
    s.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return s;
  }
  void expect_no_oversubscription(const std::vector<std::string>& env, const std::string& what) {
    const Sampled s = train(env);
    std::string out;
    std::getline(std::ifstream(dir_ + "/log"), out, '\0');
    ASSERT_EQ(s.code, 0) << what << "\n" << out;
    EXPECT_GT(s.samples, 100) << what;
    EXPECT_LE(s.most, kThreads) << what << ": " << s.most << " compute threads runnable at once";
    std::printf("  %s: at most %d compute threads runnable at once (%d samples)\n", what.c_str(), s.most, s.samples);
  }
};

TEST_F(ThreadsCli, OpenMpOpenBlasNeverOversubscribes) {
  for (const char* gemm : {"openblas", "onednn"}) {
    expect_no_oversubscription({std::string("ZT_GEMM=") + gemm}, std::string("OpenMP OpenBLAS, ZT_GEMM=") + gemm);
  }
}

TEST_F(ThreadsCli, PthreadsOpenBlasIsHeldAtOneThread) {
  if (::access((std::string(kPthreadBlas) + "/libopenblas.so.0").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "libopenblas0-pthread is not installed";
  }
  for (const char* gemm : {"openblas", "onednn"}) {
    expect_no_oversubscription({std::string("ZT_GEMM=") + gemm, std::string("LD_LIBRARY_PATH=") + kPthreadBlas},
                               std::string("pthreads OpenBLAS, ZT_GEMM=") + gemm);
  }
}

}  // namespace
