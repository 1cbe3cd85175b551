// SIGTERM / SIGINT / SIGUSR1 -> a flag read at step boundaries.
#include "engine/stop_signal.h"

#include <csignal>
#include <cstdint>

namespace zt {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) { g_signal = sig; }

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

int stop_signal_received() { return g_signal; }

StatusOr<bool> any_rank_stopping(ProcessGroup* world) {
  int64_t n = g_signal != 0 ? 1 : 0;
  if (world != nullptr && world->size() > 1) ZT_RETURN_IF_ERROR(world->all_reduce(&n, 1, CommDType::kI64)->wait());
  return n > 0;
}

}  // namespace zt
