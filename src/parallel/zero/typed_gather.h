// All-gather of flat parameter data in its storage dtype: fp32 as floats; 16-bit values
// (bf16, f16) as 32-bit words, two values each, which needs every rank's segment to have
// an even length and start (the mixed-precision partition is aligned to 2, and the
// ranges gathered start and end on even elements).
// Thread-safety: as ProcessGroup::all_gather.
#pragma once

#include <cstddef>
#include <vector>

#include "backend/dtype.h"
#include "comm/process_group.h"

namespace zt {

// data: the whole range (counts summed), dtype elements; counts: per rank, in elements.
WorkHandle all_gather_typed(ProcessGroup* group, void* data, std::vector<size_t> counts, DType dtype);

}  // namespace zt
