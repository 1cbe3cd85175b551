// Status line rendering.
#include "cli/progress.h"

#include <unistd.h>

namespace zt {

Progress::Progress(int64_t total_steps, int64_t print_every, bool tty, FILE* out)
    : total_(total_steps), print_every_(print_every < 1 ? 1 : print_every), tty_(tty), out_(out) {}

bool Progress::stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

std::string Progress::format_duration(double s) {
  char buf[32];
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) {
    std::snprintf(buf, sizeof(buf), "%ldh%02ldm", t / 3600, (t / 60) % 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof(buf), "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%lds", t);
  }
  return buf;
}

std::string Progress::render(const ProgressSample& s, double elapsed_s) const {
  char buf[256];
  const double eta = s.step > 0 ? elapsed_s / static_cast<double>(s.step) * static_cast<double>(total_ - s.step) : 0.0;
  char mfu[32] = "";
  if (s.mfu >= 0.0) std::snprintf(mfu, sizeof(mfu), " | MFU %4.1f%%", 100.0 * s.mfu);
  char moe[64] = "";
  if (s.moe_aux >= 0.0) {
    std::snprintf(moe, sizeof(moe), " | aux %.4f, %lld dropped", s.moe_aux, static_cast<long long>(s.moe_dropped));
  }
  std::snprintf(buf, sizeof(buf), "step %lld/%lld | loss %.4f%s | lr %.2e | norm %.2f | %.0f tok/s%s | ETA %s",
                static_cast<long long>(s.step), static_cast<long long>(total_), s.loss, moe, s.lr, s.grad_norm,
                s.tokens_per_s, mfu, format_duration(eta).c_str());
  return buf;
}

void Progress::update(const ProgressSample& s, double elapsed_s) {
  last_ = render(s, elapsed_s);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", last_.c_str());
    line_open_ = true;
  } else if (s.step % print_every_ == 0 || s.step == total_ || s.step == 1) {
    std::fprintf(out_, "%s\n", last_.c_str());
  }
  std::fflush(out_);
}

void Progress::message(const std::string& line) {
  if (tty_ && line_open_) {
    std::fprintf(out_, "\r\033[K%s\n%s", line.c_str(), last_.c_str());
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (tty_ && line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace zt
