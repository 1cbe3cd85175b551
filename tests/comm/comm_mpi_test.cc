// The MPI backend under mpirun (shared memory only: --mca btl self,vader): the collective
// checks of zt_comm_driver at 1..4 ranks with both algorithms, and the fault acceptance
// tests: a rank that stops itself (SIGSTOP) makes its peers print the timeout line and
// abort the job within deadline + 5 s; a rank that kills itself (SIGKILL) ends the job
// within 10 s. Every launched process carries a unique token on its command line, and
// TearDown SIGKILLs by pid any process still carrying it, whatever happened.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/launch.h"

namespace {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string driver_path() { return zt::testing::binary_dir() + "/zt_comm_driver"; }

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

struct MpiRun {
  bool exited = false;  // by exit() (else by a signal or our time limit)
  int code = -1;        // exit status, or the signal number
  bool timed_out = false;
  std::string output;   // stdout and stderr of every rank and of mpirun
  double end_epoch = 0.0;
  double seconds = 0.0;
};

class CommMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
    token_ = "zt_comm_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter_);
    out_path_ = "/tmp/" + token_ + ".out";
  }
  void TearDown() override {
    for (int pid : live_pids()) ::kill(pid, SIGKILL);  // stopped ranks included
    ::unlink(out_path_.c_str());
  }

  // Processes (not zombies) whose command line carries this test's token.
  std::vector<int> live_pids() const {
    std::vector<int> pids;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return pids;
    while (dirent* e = ::readdir(proc)) {
      const int pid = std::atoi(e->d_name);
      if (pid <= 0 || pid == ::getpid()) continue;
      std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
      if (cmdline.find(token_) == std::string::npos) continue;
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string statline;
      std::getline(stat, statline);
      const size_t paren = statline.rfind(')');
      if (paren != std::string::npos && paren + 2 < statline.size() && statline[paren + 2] == 'Z') continue;
      pids.push_back(pid);
    }
    ::closedir(proc);
    return pids;
  }

  // Waits up to `grace_s` for every tokened process to be gone; returns those left.
  std::vector<int> leftovers_after(double grace_s) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    std::vector<int> left = live_pids();
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      left = live_pids();
    }
    return left;
  }

  MpiRun mpirun(int np, const std::vector<std::string>& args, double limit_s) const {
    std::vector<std::string> argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                                     "--mca", "btl", "self,vader", "-np", std::to_string(np), driver_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--token");
    argv.push_back(token_);
    MpiRun run;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      const int fd = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setenv("OMP_NUM_THREADS", "1", 1);
      std::vector<char*> cargv;
      for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
      cargv.push_back(nullptr);
      ::execvp("mpirun", cargv.data());
      ::_exit(127);
    }
    int status = 0;
    for (;;) {
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(limit_s)) {
        run.timed_out = true;
        ::kill(-pid, SIGKILL);  // the process group this test created
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    run.end_epoch = epoch_seconds();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.exited = WIFEXITED(status);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    run.output = zt::testing::read_text(out_path_);
    return run;
  }

  static double stop_epoch(const std::string& output) {
    std::smatch m;
    if (!std::regex_search(output, m, std::regex("stopping itself at step [0-9]+ \\(t=([0-9.]+)\\)"))) return 0.0;
    return std::stod(m[1]);
  }

  // Runs a fault case and checks the job ended non-zero with no process left.
  MpiRun fault(const std::string& mode, const std::string& algorithm) {
    const MpiRun run = mpirun(3, {"--mode", mode, "--victim", "1", "--at", "5", "--timeout", "3", "--algorithm",
                                  algorithm}, 30.0);
    EXPECT_FALSE(run.timed_out) << run.output;
    EXPECT_FALSE(run.exited && run.code == 0) << "mpirun exited 0\n" << run.output;
    const std::vector<int> left = leftovers_after(2.0);
    EXPECT_TRUE(left.empty()) << left.size() << " processes of this job left after mpirun exited";
    return run;
  }

  static inline int counter_ = 0;
  std::string token_;
  std::string out_path_;
};

TEST_F(CommMpi, CollectivesOnOneToFourRanksBothAlgorithms) {
  for (int np = 1; np <= 4; ++np) {
    const MpiRun run = mpirun(np, {"--mode", "check", "--timeout", "60"}, 120.0);
    EXPECT_TRUE(run.exited && run.code == 0) << "np=" << np << " exit " << run.code << "\n" << run.output;
    EXPECT_NE(run.output.find("comm_driver: all " + std::to_string(np) + " ranks passed"), std::string::npos)
        << run.output;
    size_t passes = 0;
    for (size_t at = run.output.find(": PASS ("); at != std::string::npos; at = run.output.find(": PASS (", at + 1)) {
      ++passes;
    }
    EXPECT_EQ(passes, static_cast<size_t>(np)) << run.output;
    std::printf("np=%d: %.2f s\n", np, run.seconds);
  }
}

void expect_timeout_line(const MpiRun& run, double stopped_at) {
  const std::regex line(
      "zerotrain: rank [02]: communication timeout at step 5: all_reduce #6 \\(4\\.00 MiB\\) did not complete in "
      "([0-9]+\\.[0-9]) s \\(timeout 3 s\\); a peer is hung or stopped; aborting the job");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.output, m, line)) << run.output;
  ASSERT_GT(stopped_at, 0.0) << run.output;
  const double after_stop = run.end_epoch - stopped_at;
  std::printf("stopped rank at t=%.3f; line reports %s s; job gone %.2f s after the stop (%.2f s total), exit %d\n",
              stopped_at, m[1].str().c_str(), after_stop, run.seconds, run.code);
  EXPECT_GE(std::stod(m[1]), 3.0);
  EXPECT_GE(after_stop, 3.0);
  EXPECT_LT(after_stop, 3.0 + 5.0);
}

TEST_F(CommMpi, StoppedRankMakesPeersAbortWithTheTimeoutLineRing) {
  const MpiRun run = fault("stop", "ring");
  expect_timeout_line(run, stop_epoch(run.output));
}

TEST_F(CommMpi, StoppedRankMakesPeersAbortWithTheTimeoutLineMpi) {
  const MpiRun run = fault("stop", "mpi");
  expect_timeout_line(run, stop_epoch(run.output));
}

TEST_F(CommMpi, KilledRankEndsTheJob) {
  const MpiRun run = fault("kill", "ring");
  const double killed_at = stop_epoch(run.output);
  ASSERT_GT(killed_at, 0.0) << run.output;
  const double after_kill = run.end_epoch - killed_at;
  std::printf("killed rank at t=%.3f; job gone %.2f s later (%.2f s total), exit %d\n", killed_at, after_kill,
              run.seconds, run.code);
  EXPECT_LT(after_kill, 10.0);
}

}  // namespace
