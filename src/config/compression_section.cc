// DeepSpeed's `compression_training` section (compression/config.py;
// docs/design/deepspeed-efficiency-rules.md 5): weight quantization (in the forward, or
// MoQ after each step) and activation quantization run; every technique's keys are read;
// the techniques zerotrain does not build are refused by key when enabled (channel pruning
// only applies to Conv2d layers, which these models do not have).
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr int64_t kMaxInt = INT64_MAX;

// Each group of `different_groups`: its params (read by read_params), modules and
// related_modules.
template <typename Fn>
void each_group(JsonReader& tech, Fn read_params) {
  auto groups = tech.object("different_groups");
  if (!groups) return;
  const Json* all = tech.raw("different_groups");
  for (auto it = all->begin(); it != all->end(); ++it) {
    groups->accept(it.key());
    if (!it->is_object()) {
      groups->fail(it.key(), "expected an object");
      continue;
    }
    JsonReader g = groups->nested(*it, groups->path(it.key()));
    JsonReader p = g.object_or_empty("params");
    std::vector<std::string> modules = g.strings("modules");
    g.raw("related_modules");
    read_params(it.key(), p, std::move(modules));
    p.done();
    g.done();
  }
  groups->done();
}

void parse_weight(JsonReader& ct, WeightQuantOptions* w) {
  auto t = ct.object("weight_quantization");
  if (!t) return;
  JsonReader s = t->object_or_empty("shared_parameters");
  w->enabled = s.boolean("enabled", false);
  if (s.boolean("quantizer_kernel", false) && w->enabled) refuse(s, "quantizer_kernel");
  w->schedule_offset = s.integer("schedule_offset", 0, 0, kMaxInt);
  w->groups = s.integer("quantize_groups", 1, 1, kMaxInt);
  s.boolean("quantize_verbose", false);
  w->symmetric = s.choice("quantization_type", "symmetric", {"symmetric", "asymmetric"}) == "symmetric";
  w->in_forward = s.boolean("quantize_weight_in_forward", false);
  if (s.choice("rounding", "nearest", {"nearest", "stochastic"}) == "stochastic" && w->enabled) refuse(s, "rounding");
  if (auto m = s.object("fp16_mixed_quantize")) {
    w->mixed = m->boolean("enabled", false);
    w->change_ratio = m->number("quantize_change_ratio", 0.001, 0.0, 1.0);
    m->done();
  }
  s.done();
  each_group(*t, [&](const std::string& name, JsonReader& p, std::vector<std::string> modules) {
    WeightQuantGroup g{name, std::move(modules), 8, 8, 1};
    g.start_bits = static_cast<int>(p.integer("start_bits", 8, 1, 32));
    g.target_bits = static_cast<int>(p.integer("target_bits", 8, 1, 32));
    g.period = p.integer("quantization_period", 1, 0, kMaxInt);
    if (g.target_bits > g.start_bits) p.fail("target_bits", "is above start_bits");
    w->groups_of_modules.push_back(std::move(g));
  });
  t->done();
}

void parse_activation(JsonReader& ct, ActivationQuantOptions* a) {
  auto t = ct.object("activation_quantization");
  if (!t) return;
  JsonReader s = t->object_or_empty("shared_parameters");
  a->enabled = s.boolean("enabled", false);
  a->symmetric = s.choice("quantization_type", "symmetric", {"symmetric", "asymmetric"}) == "symmetric";
  if (s.choice("range_calibration", "dynamic", {"dynamic", "static"}) == "static" && a->enabled) refuse(s, "range_calibration");
  a->schedule_offset = s.integer("schedule_offset", 1000, 0, kMaxInt);
  s.done();
  each_group(*t, [&](const std::string& name, JsonReader& p, std::vector<std::string> modules) {
    ActQuantGroup g{name, std::move(modules), 8};
    g.bits = static_cast<int>(p.integer("bits", 8, 4, 8));
    if (g.bits != 4 && g.bits != 8) p.fail("bits", "must be 4 or 8 (DeepSpeed asserts it), got " + std::to_string(g.bits));
    a->groups_of_modules.push_back(std::move(g));
  });
  t->done();
}

// Pruning and layer reduction: read, and refused by key when enabled.
void parse_unbuilt(JsonReader& ct) {
  for (const char* name : {"sparse_pruning", "row_pruning", "head_pruning", "channel_pruning"}) {
    auto t = ct.object(name);
    if (!t) continue;
    JsonReader s = t->object_or_empty("shared_parameters");
    if (s.boolean("enabled", false)) refuse(s, "enabled");
    s.choice("method", "l1", {"l1", "topk", "snip_momentum"});
    for (const char* k : {"schedule_offset", "schedule_offset_end", "schedule_offset_stride", "num_heads"}) {
      s.integer(k, 0, 0, kMaxInt);
    }
    s.string("block_pattern", "4x1");
    s.number("dense_ratio", 0.1, 0.0, 1.0);
    s.raw("excluded_modules");
    s.done();
    each_group(*t, [](const std::string&, JsonReader& p, std::vector<std::string>) { p.number("dense_ratio", 0.5, 0.0, 1.0); });
    t->done();
  }
  if (auto t = ct.object("layer_reduction")) {
    if (t->boolean("enabled", false)) refuse(*t, "enabled");
    t->integer("keep_number_layer", 0, 0, kMaxInt);
    t->string("module_name_prefix", "");
    t->raw("teacher_layer");
    t->raw("other_module_name");
    t->done();
  }
}

}  // namespace

void parse_compression(JsonReader& root, CompressionOptions* c) {
  auto ct = root.object("compression_training");
  if (!ct) return;
  parse_weight(*ct, &c->weight);
  parse_activation(*ct, &c->activation);
  parse_unbuilt(*ct);
  ct->done();
}

}  // namespace zt::config_sections
