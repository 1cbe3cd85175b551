// The job's host map (see host_map.h).
#include "engine/host_map.h"
#include "engine/rank_sync.h"
#include "core/host_name.h"

#include <cstdlib>
#include <map>


namespace zt {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

}  // namespace

RankPlacement rank_placement() {
  RankPlacement p;
  p.host = host_name();
  if (const char* local = env("SLURM_LOCALID"); local != nullptr && env("SLURM_PROCID") != nullptr) {
    p.local_rank = std::atoi(local);
    p.source = "Slurm";
  } else if (const char* ompi = env("OMPI_COMM_WORLD_LOCAL_RANK")) {
    p.local_rank = std::atoi(ompi);
    p.source = "Open MPI";
  } else if (const char* pmix = env("PMIX_RANK")) {
    (void)pmix;
    p.source = "PMIx";
  } else {
    p.source = "one process";
  }
  return p;
}

std::string format_host_map(const std::vector<std::string>& host_of_rank, const std::string& source) {
  std::vector<std::string> order;
  std::map<std::string, std::string> ranks;
  for (size_t r = 0; r < host_of_rank.size(); ++r) {
    const std::string& h = host_of_rank[r];
    if (ranks.find(h) == ranks.end()) order.push_back(h);
    std::string& list = ranks[h];
    list += (list.empty() ? "" : ",") + std::to_string(r);
  }
  std::string line = "hosts: " + std::to_string(order.size()) + " (";
  for (size_t i = 0; i < order.size(); ++i) line += (i ? "; " : "") + order[i] + ": ranks " + ranks[order[i]];
  return line + "), placement from " + source;
}

StatusOr<std::string> describe_host_map(ProcessGroup* world) {
  const RankPlacement me = rank_placement();
  if (world == nullptr) return format_host_map({me.host}, me.source);
  ZT_ASSIGN_OR_RETURN(const std::vector<std::string> hosts, strings_at_root(world, me.host));
  if (world->rank() != 0) return std::string();
  return format_host_map(hosts, me.source);
}

}  // namespace zt
