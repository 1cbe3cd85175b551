// Test helpers for tests that run zerotrain's programs: where the test binary's sibling
// executables are (drivers, the zerotrain CLI), the mpirun prefix every multi-rank test
// uses (root allowed, oversubscribed, shared memory only, one thread per rank), shell
// runs that capture the combined output (into a log) or stdout, and readers for what the training drivers
// write: "step N loss <hex float>" lines and raw float files. Header-only, tests only.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>
#include <string>
#include <vector>

namespace zt::testing {

// A small byte-level training corpus for CLI tests: dir/corpus.txt, 150 short documents
// separated by "%" lines; prepare it with kPrepareSmallCorpus (writes train.bin).
inline void write_small_corpus(const std::string& dir) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "a stitch in time saves nine " + std::to_string(i % 13) + " times\n%\n";
  std::ofstream(dir + "/corpus.txt") << text;
}
inline constexpr const char* kPrepareSmallCorpus = "prepare corpus.txt -o train.bin --separator % --tokenizer byte";

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

// Runs `command` through the shell and returns its stdout; *rc gets the exit status (or -1).
inline std::string run_output(const std::string& command, int* rc) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) {
    *rc = -1;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The losses of the "step N loss <hex float> ..." lines of `log`, as printed.
inline std::vector<std::string> step_loss_hex(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    char hex[64];
    int step;
    if (std::sscanf(line.c_str(), "step %d loss %63s", &step, hex) == 2) out.push_back(hex);
  }
  return out;
}

inline std::vector<double> step_losses(const std::string& log) {
  std::vector<double> out;
  for (const std::string& hex : step_loss_hex(log)) out.push_back(std::strtod(hex.c_str(), nullptr));
  return out;
}

// step -> loss, from the hex column (the last) of a run's metrics.csv at `path`.
inline std::map<int64_t, double> metrics_losses(const std::string& path) {
  std::map<int64_t, double> m;
  std::istringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line) && line[0] == '#') {
  }  // the "# backend" lines, then the header
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string hex = line.substr(line.rfind(',') + 1);
    m[std::strtoll(line.c_str(), nullptr, 10)] = std::strtod(hex.c_str(), nullptr);
  }
  return m;
}

// The values after `key` ("norm", ...) on the "step N loss <hex> key <hex>" lines of `log`.
inline std::vector<double> step_values(const std::string& log, const std::string& key) {
  std::vector<double> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("step ", 0) != 0) continue;
    const size_t at = line.find(" " + key + " ");
    if (at != std::string::npos) out.push_back(std::strtod(line.c_str() + at + key.size() + 2, nullptr));
  }
  return out;
}

// The floats of a raw native-endian file (a driver's --out); empty if it is missing.
inline std::vector<float> read_floats(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return {};
  std::vector<float> out(static_cast<size_t>(f.tellg()) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  return out;
}

}  // namespace zt::testing
