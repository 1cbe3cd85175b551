// launcher_local_place (launcher_env.h).
#include "core/launcher_env.h"

#include <cstdlib>
#include <initializer_list>

namespace zt {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n >= 0 ? static_cast<int>(n) : fallback;
}

}  // namespace

LocalPlace launcher_local_place() {
  struct Vars {
    const char* rank;
    const char* size;
  };
  for (const Vars& v : {Vars{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                        Vars{"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"}, Vars{"LOCAL_RANK", "LOCAL_WORLD_SIZE"}}) {
    if (std::getenv(v.rank) == nullptr && std::getenv(v.size) == nullptr) continue;
    return {env_int(v.rank, 0), env_int(v.size, 0)};
  }
  return {};
}

}  // namespace zt
