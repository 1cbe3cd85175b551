// TaskProgress: silent for a task that ends within its first second; afterwards plain
// lines in a log (the first at once, then at most one per 10 s) and a final 100 % line.
#include "cli/task_progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace zt {
namespace {

std::string contents(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
  return s;
}

TEST(TaskProgress, QuietForShortTasksThenPlainLinesInALog) {
  FILE* quiet = std::tmpfile();
  TaskProgress fast("prepare", /*tty=*/false, quiet);
  fast.update(5e8, 1e9);
  fast.finish();
  EXPECT_EQ(contents(quiet), "");
  std::fclose(quiet);

  FILE* log = std::tmpfile();
  TaskProgress slow("prepare", /*tty=*/false, log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  slow.update(5e8, 1e9);
  slow.update(6e8, 1e9);  // within 10 s of the last line: not printed
  slow.finish();
  const std::string out = contents(log);
  EXPECT_NE(out.find("prepare: 50% (0.50 of 1.00 GB)"), std::string::npos) << out;
  EXPECT_EQ(out.find("60%"), std::string::npos) << out;
  EXPECT_NE(out.find("prepare: 100% (1.00 of 1.00 GB)"), std::string::npos) << out;
  std::fclose(log);
}

}  // namespace
}  // namespace zt
