// AioConfig's checks; see aio_config.h.
#include "io/aio_config.h"

#include <string>

namespace zt {

Status AioConfig::validate() const {
  if (block_size == 0 || block_size % kIoAlign != 0) {
    return Status::InvalidArgument("/aio/block_size: must be a positive multiple of " + std::to_string(kIoAlign) +
                                   " bytes (O_DIRECT alignment), got " + std::to_string(block_size));
  }
  if (queue_depth < 1 || queue_depth > 4096) {
    return Status::InvalidArgument("/aio/queue_depth: must be in [1, 4096], got " + std::to_string(queue_depth));
  }
  if (thread_count < 1 || thread_count > 64) {
    return Status::InvalidArgument("/aio/thread_count: must be in [1, 64], got " + std::to_string(thread_count));
  }
  return Status::OK();
}

}  // namespace zt
