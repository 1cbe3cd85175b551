// `zerotrain launch` (see launch_command.h): hosts from the hostfile and filters, the
// mpirun command line, then exec.
#include "cli/launch_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "cli/exit_status.h"
#include "cli/hostfile.h"
#include "planner/host_split.h"

namespace zt {

namespace {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/=@%+") ==
                        std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int env_threads() {
  const char* v = std::getenv("OMP_NUM_THREADS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : 0;
}

// Threads per rank, the mapping and binding arguments and the line that explains them: bound
// to cores where the ranks fit a host shaped like this one (--bind auto), else not bound.
Status place_ranks(const LaunchCommandArgs& a, const std::vector<HostSlots>& hosts, LaunchPlan* plan) {
  const HostShape shape = this_host_shape();
  int per_host = 0;
  bool same = true;
  for (const HostSlots& h : hosts) {
    same = same && (per_host == 0 || per_host == static_cast<int>(h.slots.size()));
    per_host = std::max(per_host, static_cast<int>(h.slots.size()));
  }
  const int threads = a.threads_per_rank > 0 ? a.threads_per_rank
                      : env_threads() > 0    ? env_threads()
                                             : std::max(1, shape.cores / per_host);
  const std::string who = (a.hostfile.empty() ? "this host (" : "hosts shaped like this one (") + shape.describe() + ")";
  StatusOr<std::vector<std::string>> bind = mpirun_binding(shape, per_host, threads, same);
  if (a.bind == "core" && !bind.ok()) return Status::InvalidArgument("launch: --bind core: " + bind.status().message());
  if (a.launcher_args.find("--map-by") != std::string::npos || a.launcher_args.find("--bind-to") != std::string::npos) {
    plan->placement = HostSplit{per_host, threads}.describe() + " per host, mapped and bound as --launcher_args says";
  } else if (a.bind == "none" || !bind.ok()) {
    plan->argv.insert(plan->argv.end(), {"--map-by", "slot", "--bind-to", "none"});
    plan->placement = HostSplit{per_host, threads}.describe() + " per host, not bound to cores: " +
                      (bind.ok() ? std::string("--bind none")
                                 : bind.status().message() + (a.hostfile.empty() ? "" : " (hosts assumed like this one)"));
  } else {
    plan->argv.insert(plan->argv.end(), bind->begin(), bind->end());
    plan->placement = HostSplit{per_host, threads}.describe() + " per host, each bound to its own cores (" + (*bind)[1] +
                      ") on " + who;
  }
  plan->argv.insert(plan->argv.end(), {"-x", "OMP_NUM_THREADS=" + std::to_string(threads)});
  return Status::OK();
}

}  // namespace

StatusOr<LaunchPlan> plan_launch(const LaunchCommandArgs& a, const std::string& self) {
  if (a.command.empty()) return Status::InvalidArgument("launch: no command to run (e.g. -- train --config c.json)");
  std::vector<HostSlots> hosts;
  if (a.hostfile.empty()) {
    if (!a.include.empty() || !a.exclude.empty() || a.num_nodes > 1) {
      return Status::InvalidArgument("launch: --include, --exclude and --num_nodes need a --hostfile");
    }
    HostSlots local{"localhost", {}};
    for (int s = 0; s < (a.num_procs > 0 ? a.num_procs : 1); ++s) local.slots.push_back(s);
    hosts.push_back(std::move(local));
  } else {
    ZT_ASSIGN_OR_RETURN(hosts, read_hostfile(a.hostfile));
    ZT_ASSIGN_OR_RETURN(hosts, select_hosts(std::move(hosts), HostFilter{a.include, a.exclude, a.num_nodes, a.num_procs}));
  }
  LaunchPlan plan;
  plan.ranks = total_slots(hosts);
  plan.host_map = mpirun_host_list(hosts);
  plan.argv = {"mpirun", "-np", std::to_string(plan.ranks), "-H", plan.host_map};
  ZT_RETURN_IF_ERROR(place_ranks(a, hosts, &plan));
  if (::geteuid() == 0) plan.argv.push_back("--allow-run-as-root");
  if (a.launcher_args.find("oob_tcp_keepalive") == std::string::npos) {
    for (const char* w : {"--mca", "oob_tcp_keepalive_time", "3", "--mca", "oob_tcp_keepalive_intvl", "1", "--mca",
                          "oob_tcp_keepalive_probes", "2"}) {
      plan.argv.push_back(w);
    }
  }
  int next = 0;
  for (const HostSlots& h : hosts) {
    plan.hosts.push_back({h.host, next, static_cast<int>(h.slots.size())});
    next += static_cast<int>(h.slots.size());
  }
  std::istringstream extra(a.launcher_args);
  for (std::string w; extra >> w;) plan.argv.push_back(w);
  plan.argv.push_back(self);
  for (const std::string& c : a.command) plan.argv.push_back(c);
  return plan;
}

std::string self_binary() {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string("zerotrain") : self;
}

int run_launch(const LaunchCommandArgs& a) {
  StatusOr<LaunchPlan> plan = plan_launch(a, self_binary());
  if (!plan.ok()) return report_error(plan.status(), kExitBadInput);
  std::string line;
  for (const std::string& w : plan->argv) line += (line.empty() ? "" : " ") + shell_quote(w);
  std::printf("launch: %d ranks on %s\nlaunch: %s\nlaunch: %s\n", plan->ranks, plan->host_map.c_str(),
              plan->placement.c_str(), line.c_str());
  std::fflush(stdout);
  if (a.dry_run) return kExitOk;
  return run_supervised(plan->argv, plan->hosts);
}

Command add_launch_command(CLI::App& app) {
  auto launch = std::make_shared<LaunchCommandArgs>();
  CLI::App* l = app.add_subcommand("launch", "Run a zerotrain command on the hosts of a DeepSpeed hostfile through mpirun "
                                             "(prints the mpirun command)");
  l->add_option("-H,--hostfile", launch->hostfile, "DeepSpeed hostfile: \"hostname slots=N\" lines, # comments");
  l->add_option("-i,--include", launch->include, "Hosts and slots to use, e.g. host1:0,1@host2");
  l->add_option("-e,--exclude", launch->exclude, "Hosts and slots to leave out, same format");
  l->add_option("--num_nodes", launch->num_nodes, "Use the first N hosts")->check(CLI::PositiveNumber);
  l->add_option("--num_procs,--num_gpus", launch->num_procs, "Ranks per host (the first N slots)")->check(CLI::PositiveNumber);
  l->add_option("--threads-per-rank", launch->threads_per_rank,
                 "Threads of each rank, exported as OMP_NUM_THREADS (default: $OMP_NUM_THREADS, else this host's "
                 "cores / ranks per host)")
      ->check(CLI::PositiveNumber);
  l->add_option("--bind", launch->bind, "auto: bind each rank to its own cores where they fit (default); core: "
                                        "always (an error where they do not fit); none: never")
      ->check(CLI::IsMember({"auto", "core", "none"}));
  l->add_option("--launcher_args", launch->launcher_args, "Extra mpirun arguments, as one quoted string");
  l->add_flag("--dry-run", launch->dry_run, "Print the mpirun command without running it");
  l->add_option("command", launch->command, "The zerotrain command for every rank, after --: -- train --config c.json")
      ->required();
  return {l, [launch] { return run_launch(*launch); }, false};
}

}  // namespace zt
