// The planned device: what `estimate` and `plan` need to know of a device backend that
// they do not open (a GPU run planned on a machine without one): its compute dtype and
// that its memory is not the host's. It runs and allocates nothing: allocate() refuses,
// naming why, and its kernel tables are empty; only the planning commands
// (RunPurpose::kPlan) are given it, never a trainer.
// Thread-safety: immutable, process-wide.
#pragma once

#include "backend/backend.h"

namespace zt {

// The planned description of (device, compute dtype); REQUIRES: device == kCuda.
const Backend& planned_device(Device device, DType compute);

}  // namespace zt
