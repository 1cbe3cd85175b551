// make_optimizer (optimizer_factory.h).
#include "engine/optimizer_factory.h"

#include "engine/trainer.h"
#include "optim/adamw.h"
#include "optim/lamb.h"
#include "optim/sgd.h"
#include "parallel/data/onebit_adam.h"
#include "parallel/data/onebit_lamb.h"

namespace zt {

namespace {

bool onebit(OptimizerKind k) {
  return k == OptimizerKind::kOneBitAdam || k == OptimizerKind::kZeroOneAdam || k == OptimizerKind::kOneBitLamb;
}

// The same refusal on every rank (the options are the same everywhere).
Status check_layout(const TrainerOptions& o, bool pipelined) {
  const bool whole = !shards_optimizer(o.zero.stage) && o.layout.tp_size == 1 && !o.zero.offload.swaps_optimizer();
  if (o.optimizer == OptimizerKind::kLamb && !whole) {
    return Status::Unimplemented("/optimizer/type: LAMB needs whole tensors for its trust ratio; it runs with ZeRO "
                                 "stage 0, no tensor parallelism and no optimizer offload");
  }
  if (onebit(o.optimizer) && (!whole || pipelined || o.layout.ep_size > 1)) {
    return Status::Unimplemented("/optimizer/type: the 1-bit optimizers compress the data-parallel exchange of whole "
                                 "tensors; they run with ZeRO stage 0 (as in DeepSpeed), no tensor, pipeline or "
                                 "expert parallelism and no optimizer offload");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> make_optimizer(const TrainerOptions& o, const ParamTable& table,
                                                    ElementRange owned, ProcessGroup* dp, bool pipelined) {
  ZT_RETURN_IF_ERROR(check_layout(o, pipelined));
  // offload_optimizer "cpu" on a device: the optimizer runs on the host, over host arrays.
  const Backend& device = backend_or_cpu(o.backend);
  const Backend& backend =
      ModelStates::updates_on_host(device, o.zero.offload) ? plain_cpu_backend(device.compute_dtype()) : device;
  if (onebit(o.optimizer) && !backend.host()) {
    return Status::Unimplemented("/optimizer/type: the 1-bit optimizers compress in host code over host memory; the " +
                                 backend.describe() + " backend's memory is not: use Adam, AdamW, Lamb or SGD there");
  }
  switch (o.optimizer) {
    case OptimizerKind::kAdamW: {
      ZT_ASSIGN_OR_RETURN(auto opt, AdamW::create(table, owned, o.adamw, backend, /*own_state=*/false));
      return std::unique_ptr<Optimizer>(std::move(opt));
    }
    case OptimizerKind::kSgd: {
      ZT_ASSIGN_OR_RETURN(auto opt, Sgd::create(table, owned, o.sgd, backend, /*own_state=*/false));
      return std::unique_ptr<Optimizer>(std::move(opt));
    }
    case OptimizerKind::kLamb: {
      ZT_ASSIGN_OR_RETURN(auto opt, Lamb::create(table, owned, o.lamb, backend, /*own_state=*/false));
      return std::unique_ptr<Optimizer>(std::move(opt));
    }
    case OptimizerKind::kOneBitAdam:
    case OptimizerKind::kZeroOneAdam:
      return std::unique_ptr<Optimizer>(
          new OneBitAdam(table, owned, o.onebit, dp, o.optimizer == OptimizerKind::kZeroOneAdam));
    case OptimizerKind::kOneBitLamb:
      return std::unique_ptr<Optimizer>(new OneBitLamb(table, owned, o.onebit, dp));
  }
  return Status::Unimplemented("optimizer kind " + std::to_string(static_cast<int>(o.optimizer)) + " is not built");
}

}  // namespace zt
