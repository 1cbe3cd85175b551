// The emulated grid of lanes.h: one ucontext a thread of the running block, a scheduler that
// runs one warp as far as it goes and then the next, barriers that count arrivals per
// generation, and each thread's cp.async groups.
#include "kernels/cuda/emulation/lanes.h"

#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace zt::emu {

namespace {

constexpr size_t kStackBytes = size_t{256} << 10;

struct Copy {
  void* to;
  const void* from;
  int bytes;
  bool valid;
  void land() const {
    if (valid) {
      std::memcpy(to, from, bytes);
    } else {
      std::memset(to, 0, bytes);
    }
  }
};

struct Lane {
  ucontext_t context;
  uint3 index;
  bool done = false;
  uint64_t exchanges = 0;  // this lane's post_and_wait calls: their parity picks the slot set
  std::vector<Copy> issued;                // cp.async copies not yet committed
  std::deque<std::vector<Copy>> committed;  // committed groups, oldest first
};

// The running grid: its shape, the running block's threads and barriers, the warps' slots.
struct Grid {
  dim3 grid, block;
  uint3 block_index{};
  const std::function<void()>* body = nullptr;
  int threads = 0, current = 0;
  std::vector<Lane> lanes;
  std::vector<std::unique_ptr<char[]>> stacks;
  ucontext_t scheduler;
  int block_arrived = 0;
  uint64_t block_generation = 0;
  std::vector<int> warp_arrived;
  std::vector<uint64_t> warp_generation, slots;
  uint64_t progress = 0;  // barriers released and threads finished: a pass without any is a deadlock
};

Grid* g_grid = nullptr;

void run_thread() {
  (*g_grid->body)();
  g_grid->lanes[g_grid->current].done = true;
  ++g_grid->progress;
}  // returns to the scheduler (uc_link)

void yield() { swapcontext(&g_grid->lanes[g_grid->current].context, &g_grid->scheduler); }

// Arrives at a barrier of `members` threads: the last one releases it.
void arrive(int& arrived, uint64_t& generation, int members) {
  const uint64_t mine = generation;
  if (++arrived == members) {
    arrived = 0;
    ++generation;
    ++g_grid->progress;
    return;
  }
  while (generation == mine) yield();
}

void start_threads(Grid& g) {
  for (int i = 0; i < g.threads; ++i) {
    Lane& l = g.lanes[i];
    l.done = false;
    l.exchanges = 0;
    l.issued.clear();  // copies never waited for are dropped: a kernel that reads them fails
    l.committed.clear();
    l.index = {static_cast<unsigned>(i) % g.block.x, static_cast<unsigned>(i) / g.block.x % g.block.y,
               static_cast<unsigned>(i) / (g.block.x * g.block.y)};
    getcontext(&l.context);
    l.context.uc_stack.ss_sp = g.stacks[i].get();
    l.context.uc_stack.ss_size = kStackBytes;
    l.context.uc_link = &g.scheduler;
    makecontext(&l.context, run_thread, 0);
  }
}

// Resumes each unfinished thread of warp w once; returns how many finished.
int pass_over_warp(Grid& g, int w) {
  int finished = 0;
  for (int i = 32 * w; i < std::min(g.threads, 32 * (w + 1)); ++i) {
    if (g.lanes[i].done) continue;
    g.current = i;
    swapcontext(&g.scheduler, &g.lanes[i].context);
    if (g.lanes[i].done) ++finished;
  }
  return finished;
}

// Warp by warp, each as far as it goes (to a block barrier, or its end) before the next one
// runs: warps drift apart as far as a GPU lets them, so a warp that refills a buffer another
// warp still reads shows (the copies' NaNs).
void run_block(Grid& g) {
  start_threads(g);
  int remaining = g.threads;
  const int warps = (g.threads + 31) / 32;
  while (remaining > 0) {
    const uint64_t before = g.progress;
    for (int w = 0; w < warps; ++w) {
      uint64_t seen;
      do {
        seen = g.progress;
        remaining -= pass_over_warp(g, w);
      } while (g.progress != seen);
    }
    if (remaining > 0 && g.progress == before) {
      std::fprintf(stderr, "emulated CUDA grid: block (%u, %u, %u): %d threads wait at a barrier the others never reach\n",
                   g.block_index.x, g.block_index.y, g.block_index.z, remaining);
      std::abort();
    }
  }
}

}  // namespace

const uint3& thread_idx() { return g_grid->lanes[g_grid->current].index; }
const uint3& block_idx() { return g_grid->block_index; }
const dim3& block_dim() { return g_grid->block; }
const dim3& grid_dim() { return g_grid->grid; }
int lane_id() { return g_grid->current % 32; }

void sync_block() { arrive(g_grid->block_arrived, g_grid->block_generation, g_grid->threads); }

void sync_warp() {
  const int w = g_grid->current / 32;
  arrive(g_grid->warp_arrived[w], g_grid->warp_generation[w], std::min(32, g_grid->threads - 32 * w));
}

const uint64_t* post_and_wait(const uint64_t* words, int n) {
  const int w = g_grid->current / 32;
  const size_t set = (g_grid->lanes[g_grid->current].exchanges++ & 1) * g_grid->slots.size() / 2;
  uint64_t* warp = g_grid->slots.data() + set + static_cast<size_t>(w) * 32 * kSlotWords;
  std::copy(words, words + n, warp + (g_grid->current % 32) * kSlotWords);
  sync_warp();
  return warp;
}

void issue_copy(void* to, const void* from, int bytes, bool valid) {
  std::memset(to, 0xff, bytes);
  g_grid->lanes[g_grid->current].issued.push_back(Copy{to, from, bytes, valid});
}

void commit_copies() {
  Lane& l = g_grid->lanes[g_grid->current];
  l.committed.push_back(std::move(l.issued));
  l.issued.clear();
}

void wait_copies(int n) {
  Lane& l = g_grid->lanes[g_grid->current];
  while (static_cast<int>(l.committed.size()) > n) {
    for (const Copy& c : l.committed.front()) c.land();
    l.committed.pop_front();
  }
}

void run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  Grid g;
  g.grid = grid;
  g.block = block;
  g.body = &body;
  g.threads = static_cast<int>(block.x * block.y * block.z);
  const int warps = (g.threads + 31) / 32;
  g.lanes.resize(g.threads);
  for (int i = 0; i < g.threads; ++i) g.stacks.push_back(std::make_unique<char[]>(kStackBytes));
  g.warp_arrived.assign(warps, 0);
  g.warp_generation.assign(warps, 0);
  g.slots.assign(2 * static_cast<size_t>(warps) * 32 * kSlotWords, 0);  // two sets (post_and_wait)
  Grid* outer = std::exchange(g_grid, &g);
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        g.block_index = {x, y, z};
        run_block(g);
      }
    }
  }
  g_grid = outer;
}

}  // namespace zt::emu
