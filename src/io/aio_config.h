// AioConfig: DeepSpeed's "aio" block, the knobs of NVMe offload's I/O engine
// (io/async_io.h): pieces of block_size bytes, queue_depth of them in flight per thread,
// thread_count threads (DeepSpeed's code calls it intra_op_parallelism), one submit per
// piece (single_submit), and whether to keep the queue full (overlap_events). Apart from
// the engine so that configuration readers need no liburing.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace zt {

inline constexpr size_t kIoAlign = 4096;  // O_DIRECT alignment of buffers, offsets and lengths

struct AioConfig {
  size_t block_size = 1 << 20;  // bytes per submitted piece
  int queue_depth = 8;          // pieces in flight per thread
  int thread_count = 1;
  bool single_submit = false;
  bool overlap_events = true;
  Status validate() const;  // names the aio key at fault
};

}  // namespace zt
