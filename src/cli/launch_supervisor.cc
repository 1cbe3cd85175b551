// mpirun under supervision (see launch_supervisor.h).
#include "cli/launch_supervisor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>

namespace zt {

namespace {

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

std::string ranks_of(const std::string& node, const std::vector<HostRanks>& hosts) {
  for (const HostRanks& h : hosts) {
    if (h.host != node) continue;
    if (h.count == 1) return "rank " + std::to_string(h.first_rank);
    return "ranks " + std::to_string(h.first_rank) + "-" + std::to_string(h.first_rank + h.count - 1);
  }
  return "its ranks";
}

}  // namespace

std::string failure_note(const std::string& line, const std::vector<HostRanks>& hosts) {
  static const std::regex lost(R"(Remote daemon: \[\[\d+,\d+\],\d+\] on node (\S+))");
  static const std::regex died(R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+))");
  static const std::regex closed(R"(Connection to (\S+) closed by remote host)");  // ssh (the rsh agent)
  std::smatch m;
  if (std::regex_search(line, m, lost)) {
    return "launch: lost host " + m[1].str() + " (" + ranks_of(m[1].str(), hosts) +
           "): its network link or daemon failed; Open MPI stops every rank";
  }
  if (std::regex_search(line, m, closed)) {
    return "launch: lost host " + m[1].str() + " (" + ranks_of(m[1].str(), hosts) +
           "): its remote shell closed (the host or its daemon died); Open MPI stops every rank";
  }
  if (std::regex_search(line, m, died)) {
    return "launch: rank " + m[1].str() + " on host " + m[2].str() + " was killed by signal " + m[3].str() +
           "; Open MPI stops every rank";
  }
  return "";
}

int run_supervised(const std::vector<std::string>& argv, const std::vector<HostRanks>& hosts) {
  int fds[2];
  if (::pipe(fds) != 0) {
    std::fprintf(stderr, "zerotrain: launch: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "zerotrain: launch: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> args;
    for (const std::string& w : argv) args.push_back(const_cast<char*>(w.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "zerotrain: launch: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  g_child = pid;
  ::signal(SIGINT, forward_signal);
  ::signal(SIGTERM, forward_signal);
  ::close(fds[1]);
  FILE* in = ::fdopen(fds[0], "r");
  char buf[4096];
  std::string line;
  while (std::fgets(buf, sizeof(buf), in) != nullptr) {
    std::fputs(buf, stdout);
    line += buf;
    if (line.back() != '\n') continue;
    if (const std::string note = failure_note(line, hosts); !note.empty()) std::printf("%s\n", note.c_str());
    std::fflush(stdout);
    line.clear();
  }
  std::fclose(in);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace zt
