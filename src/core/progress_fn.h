// ProgressFn: how long-running library work (writing a checkpoint or an export, reading
// one back, preparing a corpus) tells its caller how far it is, without knowing how
// the caller shows it (cli/task_progress.h). done and total are bytes; total may be 0
// when unknown. An empty function is allowed and means nobody is listening.
#pragma once

#include <cstdint>
#include <functional>

namespace zt {

using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

}  // namespace zt
