// The parent side of `zerotrain launch`: runs mpirun as a child with its output through a
// pipe, copies every line to stdout, and when Open MPI reports a failed host or rank adds
// one line naming the host and the ranks it ran (with --map-by slot, -H host:n hands out
// ranks host after host, so the ranks of each host are known before the job starts):
//   "Remote daemon: [[j,0],d] on node H"        -> launch: lost host H (ranks a-b) ...
//   "process rank R with PID P on node H exited on signal S" -> launch: rank R on host H ...
//   "Connection to H closed by remote host." (ssh, the rsh agent) -> launch: lost host H ...
// SIGINT and SIGTERM are passed on to mpirun. Returns mpirun's exit status.
// Thread-safety: one call per process.
#pragma once

#include <string>
#include <vector>

namespace zt {

struct HostRanks {
  std::string host;
  int first_rank = 0;
  int count = 0;
};

// The annotation for one line of mpirun's output, or "" when the line reports no failure.
std::string failure_note(const std::string& line, const std::vector<HostRanks>& hosts);

int run_supervised(const std::vector<std::string>& argv, const std::vector<HostRanks>& hosts);

}  // namespace zt
