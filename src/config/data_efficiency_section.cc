// DeepSpeed's `data_efficiency` section (data_pipeline/config.py;
// docs/design/deepspeed-efficiency-rules.md sections 1.3 and 2):
//   data_sampling.curriculum_learning.curriculum_metrics: "seqlen_truncate" is the
//     sequence-length curriculum (Megatron-DeepSpeed's post-process: the first d tokens);
//     a single_cluster metric with no index files schedules a difficulty nothing reads (as
//     in DeepSpeed without a post-process hook; a banner note says so); seqlen_reshape and
//     index-based metrics are refused by key.
//   data_routing.random_ltd: random layerwise token dropping; runs when random_ltd.enabled,
//     the one switch DeepSpeed's engine tests.
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr int64_t kMaxInt = INT64_MAX;

std::vector<int64_t> layer_ids(JsonReader& r, const std::string& key) {
  std::vector<int64_t> out;
  const Json* v = r.raw(key);
  bool ok = v != nullptr && v->is_array();
  for (size_t i = 0; ok && i < v->size(); ++i) {
    ok = (*v)[i].is_number_integer() && (*v)[i].get<int64_t>() >= 0;
    if (ok) out.push_back((*v)[i].get<int64_t>());
  }
  if (!ok) r.fail(key, v == nullptr ? "is missing" : "expected a list of block indices, got " + json_brief(*v));
  return out;
}

void parse_metric(JsonReader& m, const std::string& name, bool on, EfficiencyOptions* e, std::vector<std::string>* notes) {
  const bool indexed = m.has("index_to_sample_path") || m.has("index_to_metric_path");
  m.string("index_to_sample_path", "");
  m.string("index_to_metric_path", "");
  m.choice("difficulty_type", "value", {"value", "percentile"});
  const std::string clustering = m.choice("clustering_type", "single_cluster", {"single_cluster", "schedule_based"});
  CurriculumOptions c = read_curriculum_schedule(m, notes);
  if (!on) return;  // a disabled curriculum configures nothing (its keys are still checked)
  if (name == "seqlen_reshape") m.fail("min_difficulty", "the seqlen_reshape metric is not built; use seqlen_truncate");
  if (name != "seqlen_truncate" && name != "seqlen_reshape" && (indexed || clustering == "schedule_based")) {
    m.fail("index_to_sample_path", "not built: index-based curriculum metrics need DeepSpeed's data-analyzer index "
                                   "files; use a seqlen_truncate metric or the curriculum_learning block");
  }
  if (name == "seqlen_truncate") {
    e->seqlen_curriculum = c;
    e->curriculum_key = m.path("").substr(0, m.path("").size() - 1);
    notes->push_back(e->curriculum_key + ": sequence-length curriculum " + std::to_string(c.min_difficulty) + " -> " +
                     std::to_string(c.max_difficulty) + " tokens; each step truncates its sequences to the first d");
  } else {
    notes->push_back(m.path("").substr(0, m.path("").size() - 1) + ": a single_cluster metric without a transform: "
                     "its difficulty is scheduled and read by nothing, as in DeepSpeed without a post-process hook");
  }
}

void parse_sampling(JsonReader& de, bool de_on, EfficiencyOptions* e, std::vector<std::string>* notes) {
  auto s = de.object("data_sampling");
  if (!s) return;
  const bool on = s->boolean("enabled", false) && de_on;
  s->integer("num_epochs", 1000, 1, kMaxInt);
  s->integer("num_workers", 0, 0, 1024);
  s->boolean("pin_memory", false);
  if (auto cl = s->object("curriculum_learning")) {
    const bool cl_on = cl->boolean("enabled", false) && on;
    cl->string("data_cluster_path", "");
    if (auto metrics = cl->object("curriculum_metrics")) {
      const Json* all = cl->raw("curriculum_metrics");
      for (auto it = all->begin(); it != all->end(); ++it) {
        if (!it->is_object()) {
          metrics->fail(it.key(), "expected an object");
          continue;
        }
        JsonReader m = metrics->nested(*it, metrics->path(it.key()));
        parse_metric(m, it.key(), cl_on, e, notes);
        m.done();
        metrics->accept(it.key());
      }
      metrics->done();
    } else if (cl_on) {
      cl->fail("curriculum_metrics", "is missing (DeepSpeed requires it when curriculum_learning is enabled)");
    }
    cl->done();
  }
  s->done();
}

void parse_random_ltd(JsonReader& routing, int64_t seed, EfficiencyOptions* e, std::vector<std::string>* notes) {
  auto r = routing.object("random_ltd");
  if (!r) return;
  RandomLtdOptions& o = e->random_ltd;
  o.enabled = r->boolean("enabled", false);
  e->random_ltd_blocks = r->integer("total_layer_num", 0, 0, 1 << 20);
  const int64_t count = r->integer("random_ltd_layer_num", 0, 0, 1 << 20);
  for (int64_t id : layer_ids(*r, "random_ltd_layer_id")) o.layers.push_back(static_cast<int>(id));
  if (r->status().ok() && static_cast<int64_t>(o.layers.size()) != count) {
    r->fail("random_ltd_layer_num", std::to_string(count) + " but random_ltd_layer_id lists " + std::to_string(o.layers.size()));
  }
  if (r->has("model_mask_name")) r->string("model_mask_name", "");
  if (r->choice("model_type", "decoder", {"decoder", "encoder"}) == "encoder") refuse(*r, "model_type");
  r->choice("hidden_state_order", "batch_seq_dim", {"batch_seq_dim", "seq_batch_dim"});
  r->integer("global_batch_size", 0, 0, kMaxInt);  // DeepSpeed's engine overwrites both (key_tables.h)
  r->integer("micro_batch_size", 0, 0, kMaxInt);
  if (auto lr = r->object("layer_token_lr_schedule")) {
    if (lr->boolean("enabled", false)) refuse(*lr, "enabled");
    lr->done();
  }
  JsonReader s = r->object_or_empty("random_ltd_schedule");
  o.min_value = s.integer("min_value", 1, 0, kMaxInt);
  o.max_value = s.integer("max_value", 1, 0, kMaxInt);
  s.choice("schedule_type", "fixed_linear", {"fixed_linear"});
  JsonReader sc = s.object_or_empty("schedule_config");
  o.require_steps = sc.integer("require_steps", 1, 1, kMaxInt);
  o.seq_per_step = sc.integer("seq_per_step", 1, 1, kMaxInt);
  sc.done();
  s.done();
  r->done();
  (void)seed;
  if (o.enabled) {
    notes->push_back("/data_efficiency/data_routing/random_ltd: blocks " + std::to_string(o.layers.size()) +
                     " of the model run on " + std::to_string(o.min_value) + " -> " + std::to_string(o.max_value) +
                     " random tokens of each sequence over " + std::to_string(o.require_steps) + " steps");
  }
}

}  // namespace

void parse_data_efficiency(JsonReader& root, EfficiencyOptions* e, std::vector<std::string>* notes) {
  auto de = root.object("data_efficiency");
  if (!de) return;
  const bool on = de->boolean("enabled", false);
  const int64_t seed = de->integer("seed", 1234, 0, kMaxInt);
  parse_sampling(*de, on, e, notes);
  if (auto routing = de->object("data_routing")) {
    routing->boolean("enabled", false);
    parse_random_ltd(*routing, seed, e, notes);
    routing->done();
  }
  de->done();
}

}  // namespace zt::config_sections
