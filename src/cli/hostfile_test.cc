// DeepSpeed hostfiles and resource filters (cli/hostfile.h) and the mpirun command that
// `zerotrain launch` builds from them (cli/launch_command.h), against the behaviour of
// deepspeed/launcher/runner.py: comments, slots, include/exclude with and without slot
// lists, num_nodes/num_procs before the filters, and errors naming the line or the host.
#include "cli/hostfile.h"

#include <gtest/gtest.h>

#include "cli/launch_command.h"

namespace zt {
namespace {

const char* kHostfile =
    "# a DeepSpeed hostfile\n"
    "worker-0 slots=4\n"
    "\n"
    "worker-1 slots=4   # second host\n"
    "worker-2 slots=2\n";

std::vector<HostSlots> pool() { return parse_hostfile(kHostfile, "hostfile").value(); }

TEST(Hostfile, ParsesHostsSlotsAndComments) {
  const auto h = pool();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[1].host, "worker-1");
  EXPECT_EQ(h[1].slots, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(mpirun_host_list(h), "worker-0:4,worker-1:4,worker-2:2");
  EXPECT_EQ(total_slots(h), 10);
}

TEST(Hostfile, BadLinesNameTheFileAndLine) {
  EXPECT_EQ(parse_hostfile("a slots=2\nb slot=2\n", "hf").status().message(),
            "hf:2: \"b slot=2\" is not \"hostname slots=N\"");
  EXPECT_EQ(parse_hostfile("a slots=2\na slots=1\n", "hf").status().message(), "hf:2: host a is listed twice");
  EXPECT_EQ(parse_hostfile("a slots=0\n", "hf").status().message(), "hf:1: slots must be positive");
  EXPECT_EQ(parse_hostfile("# nothing\n", "hf").status().message(), "hf: no hosts");
}

TEST(Hostfile, IncludeKeepsListedHostsAndSlots) {
  const auto h = select_hosts(pool(), HostFilter{"worker-0:0,2@worker-2", "", -1, -1}).value();
  EXPECT_EQ(mpirun_host_list(h), "worker-0:2,worker-2:2");
  EXPECT_EQ(h[0].slots, (std::vector<int>{0, 2}));
}

TEST(Hostfile, ExcludeDropsSlotsOrWholeHosts) {
  EXPECT_EQ(mpirun_host_list(select_hosts(pool(), HostFilter{"", "worker-1@worker-0:3", -1, -1}).value()),
            "worker-0:3,worker-2:2");
}

TEST(Hostfile, NumNodesAndNumProcsTrimBeforeTheFilters) {
  EXPECT_EQ(mpirun_host_list(select_hosts(pool(), HostFilter{"", "", 2, 1}).value()), "worker-0:1,worker-1:1");
  // num_procs 2 leaves slots 0 and 1: slot 3 no longer exists for --include.
  EXPECT_EQ(select_hosts(pool(), HostFilter{"worker-0:3", "", -1, 2}).status().message(),
            "--include: worker-0 has no slot 3");
}

TEST(Hostfile, FiltersRefuseUnknownHostsAndBothAtOnce) {
  EXPECT_EQ(select_hosts(pool(), HostFilter{"worker-9", "", -1, -1}).status().message(),
            "--include: host \"worker-9\" is not in the hostfile");
  EXPECT_EQ(select_hosts(pool(), HostFilter{"worker-0", "worker-1", -1, -1}).status().message(),
            "--include and --exclude are mutually exclusive (as in DeepSpeed)");
  EXPECT_EQ(select_hosts(pool(), HostFilter{"", "worker-0@worker-1@worker-2", -1, -1}).status().message(),
            "no hosts or slots left after --include/--exclude");
  EXPECT_EQ(select_hosts(pool(), HostFilter{"worker-0:x", "", -1, -1}).status().message(),
            "--include \"worker-0:x\": \"x\" is not a slot index of worker-0");
}

TEST(Launch, BuildsTheMpirunCommand) {
  LaunchCommandArgs a;
  a.num_procs = 3;
  a.threads_per_rank = 4096;  // more cores than any host here: not bound
  a.launcher_args = "--mca btl tcp,self";
  a.command = {"train", "--config", "c.json"};
  const LaunchPlan p = plan_launch(a, "/opt/zt/zerotrain").value();
  EXPECT_EQ(p.ranks, 3);
  EXPECT_EQ(p.host_map, "localhost:3");
  ASSERT_GE(p.argv.size(), 11u);
  EXPECT_EQ(std::vector<std::string>(p.argv.begin(), p.argv.begin() + 11),
            (std::vector<std::string>{"mpirun", "-np", "3", "-H", "localhost:3", "--map-by", "slot", "--bind-to", "none",
                                      "-x", "OMP_NUM_THREADS=4096"}));
  EXPECT_EQ(p.placement.rfind("3 ranks x 4096 threads per host, not bound to cores: 3 ranks x 4096 threads need 12288 "
                              "cores; the host has ", 0), 0u) << p.placement;
  EXPECT_EQ(std::vector<std::string>(p.argv.end() - 7, p.argv.end()),
            (std::vector<std::string>{"--mca", "btl", "tcp,self", "/opt/zt/zerotrain", "train", "--config", "c.json"}));
  ASSERT_EQ(p.hosts.size(), 1u);
  EXPECT_EQ(p.hosts[0].count, 3);
  a.bind = "core";
  EXPECT_EQ(plan_launch(a, "z").status().message().rfind("launch: --bind core: 3 ranks x 4096 threads need", 0), 0u);
  a.include = "worker-0";
  EXPECT_EQ(plan_launch(a, "z").status().message(), "launch: --include, --exclude and --num_nodes need a --hostfile");
}

// One rank of one thread fits every host: bound to one core of its own, and
// OMP_NUM_THREADS says the count; --bind none leaves it free.
TEST(Launch, BindsEachRankToItsOwnCores) {
  LaunchCommandArgs a;
  a.num_procs = 1;
  a.threads_per_rank = 1;
  a.command = {"train"};
  LaunchPlan p = plan_launch(a, "z").value();
  EXPECT_EQ(std::vector<std::string>(p.argv.begin() + 5, p.argv.begin() + 11),
            (std::vector<std::string>{"--map-by", "slot:PE=1", "--bind-to", "core", "-x", "OMP_NUM_THREADS=1"}));
  EXPECT_EQ(p.placement.rfind("1 rank x 1 thread per host, each bound to its own cores (slot:PE=1) on this host (", 0),
            0u) << p.placement;
  a.bind = "none";
  p = plan_launch(a, "z").value();
  EXPECT_EQ(p.argv[8], "none");
  EXPECT_EQ(p.placement, "1 rank x 1 thread per host, not bound to cores: --bind none");
}

TEST(Launch, NamesTheRanksOfALostHostOrAKilledRank) {
  const std::vector<HostRanks> hosts = {{"h1", 0, 2}, {"h2", 2, 1}};
  EXPECT_EQ(failure_note("  Remote daemon: [[32450,0],3] on node h1\n", hosts),
            "launch: lost host h1 (ranks 0-1): its network link or daemon failed; Open MPI stops every rank");
  EXPECT_EQ(failure_note("mpirun noticed that process rank 2 with PID 0 on node h2 exited on signal 9 (Killed).", hosts),
            "launch: rank 2 on host h2 was killed by signal 9; Open MPI stops every rank");
  EXPECT_EQ(failure_note("Connection to h2 closed by remote host.", hosts),
            "launch: lost host h2 (rank 2): its remote shell closed (the host or its daemon died); Open MPI stops every "
            "rank");
  EXPECT_EQ(failure_note("step 3/10 | loss 2.5", hosts), "");
}

}  // namespace
}  // namespace zt
