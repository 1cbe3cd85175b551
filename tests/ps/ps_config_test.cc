// The "parameter_server" config section: defaults, every key, and each error with its
// JSON pointer; the section's presence is what routes `zerotrain train` to it.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/config_input.h"
#include "cli/ps_command.h"
#include "engine/run_inputs.h"
#include "config/config.h"

namespace zt {
namespace {

StatusOr<ZtConfig> parse(const std::string& text) { return parse_config_text(text, "config.json"); }

void expect_error(const std::string& text, const std::string& message) {
  auto c = parse(text);
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_EQ(c.status().message(), message) << text;
}

TEST(PsConfig, AbsentSectionIsDisabled) {
  auto c = parse("{}");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_FALSE(c->parameter_server.enabled);
}

TEST(PsConfig, DefaultsAndEveryKey) {
  auto d = parse(R"({"parameter_server": {}})");
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_TRUE(d->parameter_server.enabled);
  const PsOptions& dp = d->parameter_server.options;
  EXPECT_EQ(dp.servers, 1);
  EXPECT_EQ(dp.mode, PsMode::kSync);
  EXPECT_EQ(dp.staleness, 0);
  EXPECT_EQ(dp.bucket_elems, d->zero.reduce.bucket_elems);  // unset: the data-parallel reduce bucket
  EXPECT_EQ(dp.deadline_s, d->parallel.comm_timeout_s);     // unset: the communication timeout
  EXPECT_EQ(dp.slow_worker_rank, -1);
  auto c = parse(R"({"parameter_server": {"enabled": true, "servers": 2, "mode": "bounded", "staleness": 3,
                     "bucket_size": 100000, "deadline_s": 30,
                     "test_slow_worker": {"rank": 4, "delay_ms": 25.5}}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const PsOptions& p = c->parameter_server.options;
  EXPECT_EQ(p.servers, 2);
  EXPECT_EQ(p.mode, PsMode::kBounded);
  EXPECT_EQ(p.staleness, 3);
  EXPECT_EQ(p.bucket_elems, 100000u);
  EXPECT_EQ(p.deadline_s, 30.0);
  EXPECT_EQ(p.slow_worker_rank, 4);
  EXPECT_EQ(p.slow_worker_delay_ms, 25.5);
  auto off = parse(R"({"parameter_server": {"enabled": false, "mode": "async"}})");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->parameter_server.enabled);
}

TEST(PsConfig, ErrorsNameThePointer) {
  expect_error(R"({"parameter_server": {"mode": "hogwild"}})",
               R"(/parameter_server/mode: expected one of "sync", "async", "bounded", got "hogwild")");
  expect_error(R"({"parameter_server": {"servers": 0}})", "/parameter_server/servers: expected an integer 1..1048576, got 0");
  expect_error(R"({"parameter_server": {"mode": "bounded"}})",
               "/parameter_server/staleness: required with mode \"bounded\": the steps a worker may run ahead of the "
               "slowest");
  expect_error(R"({"parameter_server": {"mode": "async", "staleness": 2}})",
               "/parameter_server/staleness: applies to mode \"bounded\" only; mode is \"async\"");
  expect_error(R"({"parameter_server": {"mode": "bounded", "staleness": -1}})",
               "/parameter_server/staleness: expected an integer 0..1073741824, got -1");
  expect_error(R"({"parameter_server": {"test_slow_worker": {"rank": 1}}})",
               "/parameter_server/test_slow_worker/delay_ms: required in test_slow_worker");
  auto unknown = parse(R"({"parameter_server": {"server": 2}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message().substr(0, 38), "/parameter_server/server: unknown key;");
  expect_error(R"({"parameter_server": 3})", "/parameter_server: expected an object, got 3");
}

TEST(PsConfig, TheSectionRoutesTheTrainCommand) {
  const std::string path = ::testing::TempDir() + "zt_ps_route.json";
  std::ofstream(path) << R"({"train_batch_size": 4, "parameter_server": {"mode": "async"}})";
  auto requested = [](const TrainCommandArgs& args) {
    auto root = load_config_json(args);
    EXPECT_TRUE(root.ok()) << root.status().to_string();
    return root.ok() && param_server_requested(root.value());
  };
  TrainCommandArgs a;
  a.config_path = path;
  EXPECT_TRUE(requested(a));
  a.overrides = {"parameter_server.enabled=false"};
  EXPECT_FALSE(requested(a));
  TrainCommandArgs demo;  // the demo configuration has no parameter_server section ...
  EXPECT_FALSE(requested(demo));
  demo.overrides = {"parameter_server.servers=1"};  // ... unless one is set
  EXPECT_TRUE(requested(demo));
  // Without mpirun there are no workers: refused as bad input before anything runs.
  a.overrides.clear();
  EXPECT_EQ(run_param_server_train(a, load_config_json(a).value()), 2);
}

}  // namespace
}  // namespace zt
