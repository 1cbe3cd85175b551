// zerotrain's "parameter_server" section (issue 7). Present (and "enabled" not false),
// `zerotrain train` under mpirun runs parameter-server training instead of all-reduce:
//   "parameter_server": {
//     "servers": 1,            // S: ranks 0..S-1 serve shards, the other W ranks work
//     "mode": "sync",          // sync | async | bounded
//     "staleness": 2,          // bounded only (required there): steps a worker may lead the slowest; 0 = sync
//     "bucket_size": 0,        // elements per gradient push; 0: zero_optimization.reduce_bucket_size
//     "deadline_s": 0,         // a silent worker (server: 1.5x) stops the job; 0: parallel.comm_timeout_s
//     "test_slow_worker": {"rank": 2, "delay_ms": 50}  // test hook: that rank sleeps per step
//   }
#include "config/sections.h"

namespace zt::config_sections {

void parse_parameter_server(JsonReader& root, ParameterServerConfig* c) {
  std::optional<JsonReader> r = root.object("parameter_server");
  if (!r) return;
  c->enabled = r->boolean("enabled", true);
  PsOptions* ps = &c->options;
  ps->servers = static_cast<int>(r->integer("servers", ps->servers, 1, 1 << 20));
  const std::string mode = r->choice("mode", ps_mode_name(ps->mode), {"sync", "async", "bounded"});
  if (StatusOr<PsMode> m = ps_mode_from_name(mode); m.ok()) ps->mode = *m;  // choice allowed only these names
  if (r->has("staleness")) {
    ps->staleness = r->integer("staleness", ps->staleness, 0, 1 << 30);
    if (r->status().ok() && ps->mode != PsMode::kBounded) {
      r->fail("staleness", "applies to mode \"bounded\" only; mode is \"" + mode + "\"");
    }
  } else if (r->status().ok() && ps->mode == PsMode::kBounded) {
    r->fail("staleness", "required with mode \"bounded\": the steps a worker may run ahead of the slowest");
  }
  ps->bucket_elems = static_cast<size_t>(r->integer("bucket_size", static_cast<int64_t>(ps->bucket_elems), 0, INT64_MAX));
  ps->deadline_s = r->number("deadline_s", ps->deadline_s, 0.0, 1e9);
  if (std::optional<JsonReader> slow = r->object("test_slow_worker")) {
    if (!slow->has("rank") || !slow->has("delay_ms")) {
      slow->fail(slow->has("rank") ? "delay_ms" : "rank", "required in test_slow_worker");
    }
    ps->slow_worker_rank = static_cast<int>(slow->integer("rank", -1, 0, 1 << 20));
    ps->slow_worker_delay_ms = slow->number("delay_ms", 0.0, 0.0, 1e7);
    slow->done();
  }
  r->done();
}

}  // namespace zt::config_sections
