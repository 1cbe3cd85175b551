// The training-efficiency sections (efficiency_sections.cc, data_efficiency_section.cc):
// each DeepSpeed spelling becomes its options, what zerotrain cannot do is refused by key,
// and a disabled block configures nothing.
#include <gtest/gtest.h>

#include "config/config.h"

namespace zt {
namespace {

StatusOr<ZtConfig> parse(const std::string& text) { return parse_config_text(text, "config.json"); }

TEST(EfficiencySections, LegacyCurriculumBecomesASeqlenSchedule) {
  auto c = parse(R"({"curriculum_learning": {"enabled": true, "curriculum_type": "seqlen", "min_difficulty": 8,
      "max_difficulty": 64, "schedule_type": "fixed_root",
      "schedule_config": {"total_curriculum_step": 100, "difficulty_step": 8, "root_degree": 2}}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_TRUE(c->efficiency.seqlen_curriculum.has_value());
  const CurriculumOptions& o = *c->efficiency.seqlen_curriculum;
  EXPECT_EQ(o.kind, CurriculumKind::kFixedRoot);
  EXPECT_EQ(o.max_difficulty, 64);
  EXPECT_EQ(o.root_degree, 2.0);
  auto off = parse(R"({"curriculum_learning": {"enabled": false, "min_difficulty": 8, "max_difficulty": 64}})");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->efficiency.seqlen_curriculum.has_value());
  auto old = parse(R"({"curriculum_learning": {"enabled": true, "min_difficulty": 8, "max_difficulty": 64,
      "schedule_type": "fixed_linear", "schedule_config": {"total_step": 10, "difficulty_step": 8}}})");
  ASSERT_TRUE(old.ok()) << old.status().to_string();
  EXPECT_EQ(old->efficiency.seqlen_curriculum->total_curriculum_step, 10);
}

TEST(EfficiencySections, DataEfficiencyGivesTheSeqlenMetricAndRandomLtd) {
  auto c = parse(R"({"data_efficiency": {"enabled": true, "seed": 1234,
      "data_sampling": {"enabled": true, "num_workers": 0, "curriculum_learning": {"enabled": true,
        "curriculum_metrics": {"seqlen_truncate": {"clustering_type": "single_cluster", "min_difficulty": 16,
          "max_difficulty": 64, "schedule_type": "fixed_linear",
          "schedule_config": {"total_curriculum_step": 50, "difficulty_step": 8}}}}},
      "data_routing": {"enabled": true, "random_ltd": {"enabled": true, "total_layer_num": 4,
        "random_ltd_layer_num": 2, "random_ltd_layer_id": [1, 2], "model_mask_name": "attention_mask",
        "model_type": "decoder", "hidden_state_order": "batch_seq_dim",
        "random_ltd_schedule": {"min_value": 16, "max_value": 64, "schedule_type": "fixed_linear",
          "schedule_config": {"require_steps": 100, "seq_per_step": 8}}}}}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->efficiency.seqlen_curriculum->min_difficulty, 16);
  EXPECT_EQ(c->efficiency.curriculum_key, "/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics/seqlen_truncate");
  EXPECT_TRUE(c->efficiency.random_ltd.enabled);
  EXPECT_EQ(c->efficiency.random_ltd.layers, (std::vector<int>{1, 2}));
  EXPECT_EQ(c->efficiency.random_ltd.seq_per_step, 8);
  EXPECT_EQ(c->efficiency.random_ltd_blocks, 4);
}

TEST(EfficiencySections, WhatCannotRunIsRefusedByKey) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {R"({"curriculum_learning": {"enabled": true, "schedule_type": "custom"}})",
       "/curriculum_learning/schedule_type: not built: \"custom\" is a Python callback"},
      {R"({"curriculum_learning": {"enabled": true, "curriculum_type": "vocab"}})", "/curriculum_learning/curriculum_type"},
      {R"({"data_efficiency": {"enabled": true, "data_sampling": {"enabled": true, "curriculum_learning": {"enabled": true,
          "curriculum_metrics": {"vocabrarity": {"index_to_sample_path": "x", "index_to_metric_path": "y"}}}}}})",
       "/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics/vocabrarity/index_to_sample_path: not built"},
      {R"({"data_efficiency": {"data_routing": {"random_ltd": {"enabled": true, "random_ltd_layer_id": [0],
          "random_ltd_layer_num": 1, "model_type": "encoder"}}}})", "/data_efficiency/data_routing/random_ltd/model_type: not built"},
      {R"({"data_efficiency": {"data_routing": {"random_ltd": {"random_ltd_layer_id": [0, 1], "random_ltd_layer_num": 1}}}})",
       "/data_efficiency/data_routing/random_ltd/random_ltd_layer_num: 1 but random_ltd_layer_id lists 2"},
      {R"({"progressive_layer_drop": {"enabled": true, "theta": 1.5}})", "/progressive_layer_drop/theta"},
      {R"({"progressive_layer_drop": {"enabled": true, "thetta": 0.5}})", "/progressive_layer_drop/thetta: unknown key"},
  };
  for (const Case& k : cases) {
    auto c = parse(k.text);
    ASSERT_FALSE(c.ok()) << k.text;
    EXPECT_NE(c.status().message().find(k.error), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace zt
