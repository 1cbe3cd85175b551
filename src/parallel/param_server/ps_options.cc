// The parameter server's modes by name (ps_options.h): the names config/ reads and the
// report prints. Kept apart from the job so the config reader links without the trainer.
#include "parallel/param_server/ps_options.h"

namespace zt {

const char* ps_mode_name(PsMode mode) {
  switch (mode) {
    case PsMode::kSync: return "sync";
    case PsMode::kAsync: return "async";
    case PsMode::kBounded: return "bounded";
  }
  return "?";
}

StatusOr<PsMode> ps_mode_from_name(const std::string& name) {
  for (PsMode m : {PsMode::kSync, PsMode::kAsync, PsMode::kBounded}) {
    if (name == ps_mode_name(m)) return m;
  }
  return Status::InvalidArgument("parameter-server mode \"" + name + "\": expected sync, async or bounded");
}

}  // namespace zt
