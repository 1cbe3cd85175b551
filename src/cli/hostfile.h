// DeepSpeed's launch vocabulary for `zerotrain launch`: the hostfile ("hostname slots=N"
// lines, '#' comments, blank lines), --include / --exclude filters ("host1:0,1@host2": a
// host's listed slots, or the whole host; hosts separated by '@'), --num_nodes (the first N
// hosts) and --num_procs (slots used per host), as deepspeed/launcher/runner.py reads them.
// A CPU "slot" is one rank's process: --include host:0,1 keeps two of its slots. The
// result is the host list with its slot counts, in hostfile order, which becomes Open
// MPI's -H list. Errors name the file and line, or the filter and the host.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace zt {

struct HostSlots {
  std::string host;
  std::vector<int> slots;  // slot indices in use, ascending (0 .. slots=N - 1 at first)
};

// Parses hostfile text; `path` names the file in errors. Duplicate hosts, a missing or
// non-positive slots=, and anything else on a line are errors.
StatusOr<std::vector<HostSlots>> parse_hostfile(const std::string& text, const std::string& path);
StatusOr<std::vector<HostSlots>> read_hostfile(const std::string& path);

struct HostFilter {
  std::string include;  // "" = every host
  std::string exclude;  // "" = none; include and exclude together are refused (as DeepSpeed does)
  int num_nodes = -1;   // > 0: the first num_nodes hosts left
  int num_procs = -1;   // > 0: the first num_procs slots of each host left
};

// Applies the filter to the hostfile's hosts; refuses a filter naming an unknown host or
// slot, and an empty result.
StatusOr<std::vector<HostSlots>> select_hosts(std::vector<HostSlots> hosts, const HostFilter& filter);

// Open MPI's host list: "host1:2,host2:2".
std::string mpirun_host_list(const std::vector<HostSlots>& hosts);
int total_slots(const std::vector<HostSlots>& hosts);

}  // namespace zt
