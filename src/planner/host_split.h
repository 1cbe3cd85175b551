// How one host's cores are shared by its ranks (issue 32, placement): a host's shape
// (sockets, physical cores), the splits of its cores into ranks x threads that `plan`
// searches and `calibrate --splits` measures, and the Open MPI mapping that binds each
// rank to its own cores (`launch`).
// Splits: r ranks of c / r threads for every r dividing the host's c cores where one rank
// spans the host (r = 1) or the ranks divide evenly among the sockets (r a multiple of the
// sockets, and each socket's cores a multiple of the threads), so no rank straddles two
// sockets when there is more than one rank.
// Binding: ranks x threads must fit the host's cores; ranks fill sockets in order
// (`ppr:K:socket:PE=T` where every host runs the same K ranks per socket, else
// `slot:PE=T`), each bound to T cores (`--bind-to core`).
// Invariants: a HostShape has sockets >= 1 and cores a positive multiple of sockets.
// Thread-safety: pure functions, except this_host_shape(), which reads sysfs.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace zt {

struct HostShape {
  int sockets = 1;
  int cores = 1;  // physical cores of the whole host
  int cores_per_socket() const { return cores / sockets; }
  std::string describe() const;  // "2 sockets, 16 cores"
};

struct HostSplit {
  int ranks = 1;
  int threads = 1;
  std::string describe() const;  // "4 ranks x 4 threads"
};

// The shape of the CPUs this process may use (its affinity mask).
HostShape this_host_shape();
// Errors name the flags: sockets >= 1, cores >= sockets and a multiple of them.
StatusOr<HostShape> host_shape(int sockets, int cores);

// Every split of the host (rule above), fewest ranks first.
std::vector<HostSplit> host_splits(const HostShape& h);

// The mpirun mapping and binding of `ranks_per_host` ranks of `threads` threads on hosts
// shaped like `h`: {"--map-by", "ppr:1:socket:PE=8", "--bind-to", "core"}, or an error
// saying why they do not fit (more threads than the host's cores).
StatusOr<std::vector<std::string>> mpirun_binding(const HostShape& h, int ranks_per_host, int threads,
                                                  bool same_ranks_every_host);

}  // namespace zt
