// `zerotrain launch`: DeepSpeed's launcher vocabulary over Open MPI. It reads a DeepSpeed
// hostfile and --include/--exclude/--num_nodes/--num_procs (cli/hostfile.h), prints the
// exact mpirun command, and runs it under supervision (cli/launch_supervisor.h: a lost
// host or a killed rank is named with the ranks it ran; mpirun's exit status is launch's).
// The ranks are this zerotrain binary with the remaining arguments (`train --config c.json`).
// Open MPI's daemons get TCP keepalives (3 s idle, 1 s apart, 2 probes) unless
// --launcher_args sets oob_tcp_keepalive_*: a host whose link drops is detected in about
// 5 s instead of Open MPI's default ~8 minutes.
// Without a hostfile the job runs on this host with --num_procs ranks (default 1).
// Placement (issue 32): each rank runs --threads-per-rank threads (OMP_NUM_THREADS; a
// config's training.threads still overrides it) and, under --bind auto, is bound to that
// many cores of its own, ranks filling sockets in order (planner/host_split.h), where the
// ranks x threads fit a host shaped like this one; otherwise it is not bound and the
// printed placement line says why. Open MPI's own default would bind each of 1-2 ranks to a
// single core whatever its thread count.
// A wrapper is worth having over a documented mpirun recipe because DeepSpeed users
// bring hostfiles and include/exclude strings that mpirun does not read.
#pragma once

#include "cli/command.h"

#include <string>
#include <vector>

#include "cli/launch_supervisor.h"
#include "core/status.h"

namespace zt {

struct LaunchCommandArgs {
  std::string hostfile;
  std::string include;
  std::string exclude;
  int num_nodes = -1;
  int num_procs = -1;
  int threads_per_rank = 0;    // 0: $OMP_NUM_THREADS, else this host's cores / ranks per host
  std::string bind = "auto";  // auto | core | none
  std::string launcher_args;  // extra mpirun arguments, one string split on spaces (DeepSpeed's --launcher_args)
  bool dry_run = false;       // print the command, do not run it
  std::vector<std::string> command;  // the zerotrain sub-command and its arguments
};

// The mpirun argument vector for `a` (argv[0] = "mpirun"); `self` is the zerotrain binary.
// Errors name the hostfile line or the filter.
struct LaunchPlan {
  std::vector<std::string> argv;
  std::string host_map;  // "host1:2,host2:2"
  int ranks = 0;
  std::string placement;  // ranks x threads per host and how they are bound, in words
  std::vector<HostRanks> hosts;  // the ranks each host runs (--map-by slot)
};
StatusOr<LaunchPlan> plan_launch(const LaunchCommandArgs& a, const std::string& self);
// This zerotrain binary's path (/proc/self/exe), or "zerotrain" where it cannot be read.
std::string self_binary();

int run_launch(const LaunchCommandArgs& a);

// Registers `zerotrain launch` and its flags.
Command add_launch_command(CLI::App& app);

}  // namespace zt
