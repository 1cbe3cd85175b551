// The configuration JSON with the command line's overrides (config_input.h).
#include "cli/config_input.h"

#include <algorithm>
#include <cstdlib>

#include "config/config.h"
#include "engine/demo.h"

namespace zt {

int launched_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  // srun --mpi=pmix sets only PMIX_RANK before MPI_Init; Slurm's task count is the world.
  if (const char* v = std::getenv("SLURM_NTASKS"); v != nullptr && std::getenv("SLURM_PROCID") != nullptr) {
    return std::max(1, std::atoi(v));
  }
  return 1;
}

StatusOr<Json> load_config_json(const TrainCommandArgs& a) {
  Json root;
  if (a.config_path.empty()) {
    ZT_ASSIGN_OR_RETURN(root, parse_json_strict(demo_config_text(), "demo config"));
  } else {
    ZT_ASSIGN_OR_RETURN(root, load_json_file(a.config_path));
  }
  for (const std::string& o : a.overrides) ZT_RETURN_IF_ERROR(apply_override(&root, o));
  if (!a.device.empty()) ZT_RETURN_IF_ERROR(apply_override(&root, "training.device=\"" + a.device + "\""));
  return root;
}

}  // namespace zt
