// DeepSpeed's training-efficiency sections (docs/design/deepspeed-efficiency-rules.md):
//   curriculum_learning           the legacy block: a seqlen curriculum
//   data_efficiency               data_sampling.curriculum_learning (seqlen metrics) and
//                                 data_routing.random_ltd
//   progressive_layer_drop        theta, gamma
//   eigenvalue                    the power-iteration estimate (engine/eigenvalue.h)
// Every key DeepSpeed reads there is read (typos stay refused); what zerotrain cannot do
// is refused by key with the reason (key_tables.h refused_values). A feature runs only
// when its own "enabled" and its parents' are true, as in DeepSpeed.
#include <algorithm>
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr int64_t kMaxInt = INT64_MAX;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A list of integers in [lo, hi] (absent: empty).
std::vector<int64_t> int_list(JsonReader& r, const std::string& key, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  const Json* v = r.raw(key);
  if (v == nullptr) return out;
  bool ok = v->is_array();
  for (size_t i = 0; ok && i < v->size(); ++i) {
    ok = (*v)[i].is_number_integer() && (*v)[i].get<int64_t>() >= lo && (*v)[i].get<int64_t>() <= hi;
    if (ok) out.push_back((*v)[i].get<int64_t>());
  }
  if (!ok) r.fail(key, "expected a list of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + json_brief(*v));
  return out;
}

}  // namespace

CurriculumOptions read_curriculum_schedule(JsonReader& r, std::vector<std::string>* notes) {
  CurriculumOptions c;
  c.min_difficulty = r.integer("min_difficulty", 1, 0, kMaxInt);
  c.max_difficulty = r.integer("max_difficulty", 1, 0, kMaxInt);
  const std::string type = r.choice("schedule_type", "fixed_linear", {"fixed_linear", "fixed_root", "fixed_discrete", "custom"});
  if (type == "custom") refuse(r, "schedule_type");
  c.kind = type == "fixed_root" ? CurriculumKind::kFixedRoot
           : type == "fixed_discrete" ? CurriculumKind::kFixedDiscrete : CurriculumKind::kFixedLinear;
  JsonReader s = r.object_or_empty("schedule_config");
  c.total_curriculum_step = s.integer("total_curriculum_step", 0, 1, kMaxInt);
  if (s.has("total_step")) {  // an older DeepSpeed's name
    c.total_curriculum_step = s.integer("total_step", 1, 1, kMaxInt);
    notes->push_back(s.path("total_step") + ": read as total_curriculum_step (an older DeepSpeed's name)");
  }
  c.difficulty_step = s.integer("difficulty_step", 1, 1, kMaxInt);
  c.root_degree = s.number("root_degree", 1.0, 0.0, kInf);
  c.difficulty = int_list(s, "difficulty", 1, kMaxInt);
  c.max_step = int_list(s, "max_step", 1, kMaxInt);
  s.done();
  return c;
}

namespace {

void parse_legacy_curriculum(JsonReader& root, EfficiencyOptions* e, std::vector<std::string>* notes) {
  auto r = root.object("curriculum_learning");
  if (!r) return;
  const bool on = r->boolean("enabled", false);
  if (r->has("curriculum_type") && r->choice("curriculum_type", "seqlen", {"seqlen"}) != "seqlen") refuse(*r, "curriculum_type");
  CurriculumOptions c = read_curriculum_schedule(*r, notes);
  r->done();
  if (!on) return;
  e->seqlen_curriculum = c;
  e->curriculum_key = "/curriculum_learning";
  notes->push_back("/curriculum_learning: sequence-length curriculum " + std::to_string(c.min_difficulty) + " -> " +
                   std::to_string(c.max_difficulty) + " tokens; each step truncates its sequences to the first d");
}

// The top-level eigenvalue block (DeepSpeed's keys and defaults; its engine reads them only
// under quantize_training, asserted off since v0.7, so running the estimate is zerotrain's).
void parse_eigenvalue(JsonReader& root, EigenvalueOptions* e, std::vector<std::string>* notes) {
  auto r = root.object("eigenvalue");
  if (!r) return;
  e->enabled = r->boolean("enabled", false);
  e->verbose = r->boolean("verbose", false);
  e->max_iter = static_cast<int>(r->integer("max_iter", 100, 1, 1 << 20));
  e->tol = r->number("tol", 1e-2, 0.0, kInf);
  e->stability = r->number("stability", 1e-6, 0.0, kInf);
  e->gas_boundary_resolution = r->integer("gas_boundary_resolution", 1, 1, kMaxInt);
  e->layer_num = static_cast<int>(r->integer("layer_num", 0, 0, 1 << 20));
  r->string("layer_name", "bert.encoder.layer");  // inert (key_tables.h), as model_name
  r->raw("model_name");
  r->done();
  if (!e->enabled) return;
  notes->push_back("/eigenvalue: each block's dominant Hessian eigenvalue every " +
                   std::to_string(e->gas_boundary_resolution) + " step(s) by DeepSpeed's power iteration (" +
                   std::to_string(e->max_iter) + " iterations at most), logged to the monitors as "
                   "Train/Eigenvalues/ModelBlockParam_<i>; each product is a difference of 4 gradients of the batch");
}

}  // namespace

void parse_efficiency(JsonReader& root, EfficiencyOptions* e, std::vector<std::string>* notes) {
  parse_legacy_curriculum(root, e, notes);
  parse_data_efficiency(root, e, notes);
  parse_compression(root, &e->compression);
  parse_eigenvalue(root, &e->eigenvalue, notes);
  root.raw("quantize_training");  // inert (key_tables.h)
  if (auto p = root.object("progressive_layer_drop")) {
    e->layer_drop.enabled = p->boolean("enabled", false);
    e->layer_drop.theta = p->number("theta", 0.5, 0.0, 1.0);
    e->layer_drop.gamma = p->number("gamma", 0.001, 0.0, kInf);
    p->done();
    if (e->layer_drop.enabled) {
      notes->push_back("/progressive_layer_drop: blocks dropped with probability rising to " +
                       std::to_string(1.0 - e->layer_drop.theta) + " at the last block; kept blocks scale their branches by 1/p");
    }
  }
}

}  // namespace zt::config_sections
