// The optimizer of a Trainer: the kind from the options, over the rank's owned range,
// with its state outside (the model states' store). Refuses, naming the config key, a
// kind the layout cannot run: LAMB and the 1-bit optimizers need whole tensors (ZeRO
// stage 0, no tensor parallelism, no optimizer offload); the 1-bit ones also talk over
// the data-parallel group themselves, so no pipeline and no fp16 loss scaling either.
// Thread-safety: plain function.
#pragma once

#include <memory>

#include "comm/process_group.h"
#include "core/status.h"
#include "optim/optimizer.h"

namespace zt {

struct TrainerOptions;

StatusOr<std::unique_ptr<Optimizer>> make_optimizer(const TrainerOptions& o, const ParamTable& table,
                                                    ElementRange owned, ProcessGroup* dp, bool pipelined);

}  // namespace zt
