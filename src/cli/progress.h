// Progress display for long runs: on a terminal, one live status line redrawn in place
// (step/total, loss, lr, tokens/s, MFU, ETA); otherwise plain lines every `print_every`
// steps, so CI logs stay readable. message() prints a permanent line (eval results,
// reports) without garbling the status line.
// Thread-safety: single-threaded.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace zt {

struct ProgressSample {
  int64_t step = 0;
  double loss = 0.0;
  double lr = 0.0;
  double grad_norm = 0.0;
  double tokens_per_s = 0.0;
  double mfu = -1.0;  // fraction of the FMA peak; < 0 unknown
  double moe_aux = -1.0;     // MoE: the balance loss; < 0 for a dense model
  int64_t moe_dropped = 0;   // MoE: token slots this rank dropped by capacity
};

class Progress {
 public:
  // tty: redraw in place; print_every: plain-line interval (>= 1).
  Progress(int64_t total_steps, int64_t print_every, bool tty, FILE* out = stdout);
  void update(const ProgressSample& s, double elapsed_s);
  void message(const std::string& line);
  void finish();

  static bool stdout_is_terminal();
  static std::string format_duration(double seconds);

 private:
  std::string render(const ProgressSample& s, double elapsed_s) const;

  int64_t total_;
  int64_t print_every_;
  bool tty_;
  FILE* out_;
  bool line_open_ = false;
  std::string last_;
};

}  // namespace zt
