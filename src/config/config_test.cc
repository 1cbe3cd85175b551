// Every class of bad configuration, with the exact message; DeepSpeed's defaults and
// batch arithmetic; command-line overrides.
#include "config/config.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

Status parse_text(const std::string& text, ZtConfig* out = nullptr) {
  auto json = parse_json_strict(text, "config.json");
  if (!json.ok()) return json.status();
  auto c = parse_config(json.value());
  if (!c.ok()) return c.status();
  if (out != nullptr) *out = c.value();
  return Status::OK();
}

void expect_error(const std::string& text, const std::string& message) {
  const Status s = parse_text(text);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.message(), message) << text;
}

TEST(Config, WrongTypeNamesPointerValueAndAllowed) {
  expect_error(R"({"zero_optimization": {"stage": "2"}})", R"(/zero_optimization/stage: expected an integer 0..3, got "2")");
  expect_error(R"({"gradient_clipping": "1.0"})", R"(/gradient_clipping: expected a number >= 0, got "1.0")");
  expect_error(R"({"wall_clock_breakdown": 1})", "/wall_clock_breakdown: expected true or false, got 1");
  expect_error(R"({"optimizer": {"type": "AdamW", "params": {"betas": 0.9}}})",
               "/optimizer/params/betas: expected two numbers in [0, 1), got 0.9");
  expect_error(R"({"zero_optimization": 2})", "/zero_optimization: expected an object, got 2");
  expect_error(R"({"data": {"train": 7}})", "/data/train: expected a string or an array of strings, got 7");
}

TEST(Config, OutOfRange) {
  expect_error(R"({"zero_optimization": {"stage": 4}})", "/zero_optimization/stage: expected an integer 0..3, got 4");
  expect_error(R"({"train_batch_size": 0})", "/train_batch_size: expected an integer >= 1, got 0");
  expect_error(R"({"optimizer": {"type": "AdamW", "params": {"lr": -1}}})",
               "/optimizer/params/lr: expected a number >= 0, got -1");
  expect_error(R"({"scheduler": {"type": "WarmupLR", "params": {"warmup_type": "cosine"}}})",
               R"(/scheduler/params/warmup_type: expected one of "log", "linear", got "cosine")");
  expect_error(R"({"model": {"n_embd": 100, "n_head": 3}})", "/model/n_embd: 100 is not divisible by n_head=3");
  expect_error(R"({"data": {"seq_len": 2048}})", "/data/seq_len: 2048 exceeds /model/n_positions=1024");
}

TEST(Config, UnknownKeysAreRefusedNotIgnored) {
  const Status top = parse_text(R"({"train_batch_sise": 8})");
  EXPECT_EQ(top.message().rfind("/train_batch_sise: unknown key; allowed here: activation_checkpointing, aio, amp, ", 0),
            0u) << top.message();
  for (const char* k : {" bfloat16,", " train_batch_size,", " comms_config,", " cuda_visible_devices,",
                        " zero_optimization"}) {  // old names and refused keys are known too
    EXPECT_NE(top.message().find(k), std::string::npos) << k;
  }
  const Status nested = parse_text(R"({"zero_optimization": {"stage": 1, "overlap_com": true}})");
  EXPECT_EQ(nested.message().substr(0, 45), "/zero_optimization/overlap_com: unknown key; ");
  const Status sched = parse_text(R"({"scheduler": {"type": "WarmupLR", "params": {"warmup_steps": 10}}})");
  EXPECT_EQ(sched.message().substr(0, 48), "/scheduler/params/warmup_steps: unknown key; all");
}

TEST(Config, DuplicateKey) {
  expect_error(R"({"zero_optimization": {"stage": 1, "stage": 2}})",
               "config.json: /zero_optimization/stage: duplicate key");
}

TEST(Config, SyntaxErrorGivesLineAndColumn) {
  const Status s = parse_text("{\n  \"train_batch_size\": 8,\n}");
  EXPECT_NE(s.message().find("config.json: invalid JSON: parse error at line 3, column 1"), std::string::npos)
      << s.message();
}

TEST(Config, MissingFile) {
  auto j = load_json_file("/nonexistent/ds_config.json");
  EXPECT_EQ(j.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(j.status().message(), "config file not found: /nonexistent/ds_config.json");
}

TEST(Config, UnsupportedFeaturesAreRefusedNamingTheKey) {
  ZtConfig c;
  EXPECT_EQ(parse_text(R"({"optimizer": {"type": "Lion", "params": {"lr": 1e-3}}})", &c).message().rfind(
                R"(/optimizer/type: "Lion": not built: )", 0), 0u);
  ASSERT_TRUE(parse_text(R"({"fp16": {"enabled": true}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok());
  ASSERT_TRUE(parse_text(R"({"fp16": {"enabled": true}, "bf16": {"enabled": true}})", &c).ok());
  EXPECT_EQ(check_supported(c).message(), "/fp16/enabled and /bf16/enabled are both true: choose one precision");
  ASSERT_TRUE(parse_text(R"({"bf16": {"enabled": true}, "parallel": {"tp": 2}, "zero_optimization": {"stage": 3}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok()) << check_supported(c).message();
  // Offload to "cpu" is where a CPU run's states live already.
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok()) << check_supported(c).message();
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok());  // ignored below stage 3, as DeepSpeed does, with a note
  add_run_notes(&c);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0], "/zero_optimization/offload_param: ignored at stage 2, as DeepSpeed ignores it: parameters "
                        "are offloaded under ZeRO-3 only");
  EXPECT_EQ(c.zero.offload.param_device, OffloadDevice::kNone);  // dropped: the model states never see it
  // "nvme": parameters need the optimizer's swap too, and each block a path.
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}})", &c).ok());
  EXPECT_EQ(check_supported(c).message(),
            "/zero_optimization/offload_param/device: \"nvme\" needs offload_optimizer.device \"nvme\" too: "
            "zerotrain swaps the parameter shard in the optimizer's chunks");
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 1, "offload_optimizer": {"device": "nvme"}}})", &c).ok());
  EXPECT_EQ(check_supported(c).message(),
            "/zero_optimization/offload_optimizer/nvme_path: device \"nvme\" needs a path (an existing directory)");
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 1, "sub_group_size": 1000000, "offload_optimizer":
      {"device": "nvme", "nvme_path": "/tmp", "buffer_count": 8, "pin_memory": false}},
      "aio": {"block_size": 262144, "queue_depth": 16, "intra_op_parallelism": 2, "single_submit": true}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok());
  EXPECT_EQ(c.zero.offload.sub_group_size, 1000000u);
  EXPECT_FALSE(c.zero.offload.pin_memory);
  EXPECT_EQ(c.zero.offload.aio.block_size, 262144u);
  EXPECT_EQ(c.zero.offload.aio.queue_depth, 16);
  EXPECT_EQ(c.zero.offload.aio.thread_count, 2);
  EXPECT_TRUE(c.zero.offload.aio.single_submit);
  expect_error(R"({"aio": {"block_size": 1000}})",
               "/aio/block_size: must be a multiple of 4096 bytes (O_DIRECT alignment), got 1000");
  expect_error(R"({"zero_optimization": {"offload_optimizer": {"device": "nvme", "ratio": 0.5}}})",
               "/zero_optimization/offload_optimizer/ratio: needs a GPU: below 1 (ZeRO-Offload++ \"Twin-Flow\") splits "
               "the step between accelerator and CPU; a CPU run updates every parameter on the CPU");
  ASSERT_TRUE(parse_text(R"({"activation_checkpointing": {"cpu_checkpointing": true}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok());
  add_run_notes(&c);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].rfind("/activation_checkpointing/cpu_checkpointing: no effect: no block is checkpointed", 0), 0u);
  expect_error(R"({"data_types": {"grad_accum_dtype": "bf16"}})",
               "/data_types/grad_accum_dtype: not built: fp16 and bf16 are not built: gradients accumulate in fp32; "
               "use \"fp32\" instead");
  ASSERT_TRUE(parse_text(R"({"communication_data_type": "bf16"})", &c).ok());
  EXPECT_EQ(c.zero.reduce.wire, CommDType::kBF16);
  ASSERT_TRUE(parse_text(R"({"communication_data_type": "fp16"})", &c).ok());
  EXPECT_EQ(c.zero.reduce.wire, CommDType::kF16);
  ASSERT_TRUE(parse_text(R"({})", &c).ok());
  EXPECT_EQ(c.zero.reduce.wire, CommDType::kF32);
  const Status int8 = parse_text(R"({"communication_data_type": "int8"})");
  EXPECT_EQ(int8.message().rfind("/communication_data_type", 0), 0u) << int8.message();
  for (const char* other : {R"("parameter_server": {"enabled": true})", R"("optimizer": {"type": "OneBitAdam"})"}) {
    ASSERT_TRUE(parse_text(std::string(R"({"communication_data_type": "bf16", )") + other + "}", &c).ok()) << other;
    const Status st = check_supported(c);
    EXPECT_NE(st.to_string().find("/communication_data_type: \"bf16\" with "), std::string::npos) << st.to_string();
  }
  ASSERT_TRUE(parse_text(R"({"tensorboard": {"enabled": true, "output_path": "x"}, "csv_monitor": {"enabled": true,
      "job_name": "j"}})", &c).ok());
  EXPECT_TRUE(c.tensorboard.enabled);
  EXPECT_EQ(c.tensorboard.output_path, "x");
  EXPECT_EQ(c.tensorboard.job_name, "DeepSpeedJobName");
  EXPECT_EQ(c.csv_monitor.job_name, "j");
  expect_error(R"({"wandb": {"enabled": true, "project": "p"}})",
               "/wandb: needs a network service: Weights & Biases needs its network service; use tensorboard or "
               "csv_monitor instead");
  EXPECT_TRUE(parse_text(R"({"wandb": {"enabled": false, "project": "p"}})").ok());
  EXPECT_TRUE(parse_text(R"({"zero_optimization": {"stage": 2, "round_robin_gradients": true}})").ok());  // inert
}

TEST(Config, DeepSpeedDefaults) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({"train_batch_size": 8, "optimizer": {"type": "adamw"}})", &c).ok());
  EXPECT_DOUBLE_EQ(c.gradient_clipping, 1.0);
  EXPECT_EQ(c.optimizer, OptimizerKind::kAdamW);
  EXPECT_DOUBLE_EQ(c.adamw.lr, 1e-3);
  EXPECT_DOUBLE_EQ(c.adamw.weight_decay, 0.0);  // FusedAdam's default
  EXPECT_DOUBLE_EQ(c.adamw.beta2, 0.999);
  EXPECT_EQ(c.zero.stage, ZeroStage::kNone);
  EXPECT_FALSE(c.zero.reduce.overlap);
  EXPECT_EQ(c.zero.reduce.bucket_elems, 500000000u);
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": 5e8}})", &c).ok());
  EXPECT_TRUE(c.zero.reduce.overlap);  // DeepSpeed turns overlap on for stage 3
  EXPECT_EQ(c.model.vocab_size, 50257);
  ASSERT_TRUE(parse_text(R"({"data": {"tokenizer": "byte"}})", &c).ok());
  EXPECT_EQ(c.model.vocab_size, 257);
  ASSERT_TRUE(parse_text(R"({"model": {"preset": "gpt2", "n_layer": 2}})", &c).ok());
  EXPECT_EQ(c.model.n_embd, 768);
  EXPECT_EQ(c.model.n_layer, 2);
}

TEST(Config, BatchArithmeticAsDeepSpeed) {
  BatchConfig b{32, 4, 0};
  ASSERT_TRUE(resolve_batch(&b, 2).ok());
  EXPECT_EQ(b.grad_accum, 4);
  b = {32, 0, 2};
  ASSERT_TRUE(resolve_batch(&b, 4).ok());
  EXPECT_EQ(b.micro_batch, 4);
  b = {0, 4, 3};
  ASSERT_TRUE(resolve_batch(&b, 2).ok());
  EXPECT_EQ(b.train_batch_size, 24);
  b = {0, 4, 0};
  ASSERT_TRUE(resolve_batch(&b, 3).ok());
  EXPECT_EQ(b.train_batch_size, 12);
  EXPECT_EQ(b.grad_accum, 1);
  b = {16, 0, 0};
  ASSERT_TRUE(resolve_batch(&b, 4).ok());
  EXPECT_EQ(b.micro_batch, 4);
  b = {32, 4, 3};
  EXPECT_EQ(resolve_batch(&b, 2).message(),
            "/train_batch_size: 32 is not train_micro_batch_size_per_gpu 4 x gradient_accumulation_steps 3 x "
            "data-parallel size 2 (= 24)");
  b = {30, 4, 0};
  EXPECT_EQ(resolve_batch(&b, 2).message(),
            "/train_batch_size: 30 is not divisible by train_micro_batch_size_per_gpu 4 x data-parallel size 2");
  b = {0, 0, 2};
  EXPECT_EQ(resolve_batch(&b, 1).message(),
            "/train_batch_size: either train_batch_size or train_micro_batch_size_per_gpu must be given");
}

// DeepSpeed's sequence_parallel_size (or zerotrain's parallel.sp): sp ranks share their
// sequences, so train_batch_size counts dp / sp data-parallel ranks, as DeepSpeed does.
TEST(Config, SequenceParallelSizeSplitsTheDataParallelRanks) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({"sequence_parallel_size": 2, "train_micro_batch_size_per_gpu": 4})", &c).ok());
  EXPECT_EQ(c.parallel.sp, 2);
  ASSERT_TRUE(resolve_parallel(&c.parallel, 8).ok());
  ASSERT_TRUE(resolve_config_batch(&c).ok());
  EXPECT_EQ(c.batch.train_batch_size, 16);  // 4 x 1 x 8 / 2
  ASSERT_TRUE(parse_text(R"({"parallel": {"sp": 4}})", &c).ok());
  EXPECT_EQ(c.parallel.sp, 4);
  EXPECT_EQ(resolve_parallel(&c.parallel, 6).message(),
            "/sequence_parallel_size: 4 must divide the data-parallel size 6 (sequence-parallel groups are made of "
            "data-parallel ranks)");
  expect_error(R"({"sequence_parallel_size": 2, "parallel": {"sp": 4}})", "/sequence_parallel_size: contradicts /parallel/sp (4)");
  expect_error(R"({"sequence_parallel_size": 0})", "/sequence_parallel_size: expected an integer 1..65536, got 0");
}

// Interleaved 1F1B: zerotrain's parallel.virtual_stages, or the same key in DeepSpeed's
// pipeline section; the two must agree.
TEST(Config, VirtualStagesFromEitherSection) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({"parallel": {"pp": 2, "virtual_stages": 2}})", &c).ok());
  EXPECT_EQ(c.parallel.virtual_stages, 2);
  ASSERT_TRUE(parse_text(R"({"parallel": {"pp": 2}, "pipeline": {"virtual_stages": 3}})", &c).ok());
  EXPECT_EQ(c.parallel.virtual_stages, 3);
  ASSERT_TRUE(parse_text(R"({"parallel": {"virtual_stages": 2}, "pipeline": {"virtual_stages": 2}})", &c).ok());
  expect_error(R"({"parallel": {"virtual_stages": 2}, "pipeline": {"virtual_stages": 3}})",
               "/pipeline/virtual_stages: contradicts /parallel/virtual_stages (2)");
  expect_error(R"({"parallel": {"virtual_stages": 0}})", "/parallel/virtual_stages: expected an integer 1..1024, got 0");
}

TEST(Config, AttentionKernelIsChosenByName) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({})", &c).ok());
  EXPECT_EQ(c.training.attention, "materialized");
  ASSERT_TRUE(parse_text(R"({"training": {"attention": "flash"}})", &c).ok());
  EXPECT_EQ(c.training.attention, "flash");
  expect_error(R"({"training": {"attention": "sdpa"}})",
               R"(/training/attention: expected one of "materialized", "flash", got "sdpa")");
}

// ZeRO++: qwZ and hpZ are stage 3's; below it each is noted and off, as DeepSpeed ignores them.
TEST(Config, ZeroPlusPlusKeys) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 3, "zero_quantized_weights": true,
      "zero_hpz_partition_size": 2}})", &c).ok());
  EXPECT_TRUE(c.zero.fetch.quantized_weights);
  EXPECT_EQ(c.zero.fetch.hpz_partition_size, 2);
  add_run_notes(&c);
  EXPECT_TRUE(c.notes.empty());
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 2, "zero_quantized_weights": true,
      "zero_hpz_partition_size": 2}})", &c).ok());
  add_run_notes(&c);
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_EQ(c.notes[0].rfind("/zero_optimization/zero_hpz_partition_size: no effect at stage 2", 0), 0u) << c.notes[0];
  EXPECT_EQ(c.zero.fetch.hpz_partition_size, 1);
}

// ZeRO++ qgZ: on at stage 3, noted and off below it; refused with 16-bit reduction and with
// expert parallelism, naming the key.
TEST(Config, QuantizedGradientsKey) {
  ZtConfig c;
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 3, "zero_quantized_gradients": true}})", &c).ok());
  EXPECT_TRUE(c.zero.reduce.quantized_gradients);
  EXPECT_TRUE(check_supported(c).ok()) << check_supported(c).message();
  add_run_notes(&c);
  EXPECT_TRUE(c.notes.empty());
  ASSERT_TRUE(parse_text(R"({"communication_data_type": "bf16",
      "zero_optimization": {"stage": 3, "zero_quantized_gradients": true}})", &c).ok());
  EXPECT_EQ(check_supported(c).message().rfind(
                "/zero_optimization/zero_quantized_gradients: true with communication_data_type \"bf16\" is not supported", 0),
            0u) << check_supported(c).message();
  ASSERT_TRUE(parse_text(R"({"zero_optimization": {"stage": 2, "zero_quantized_gradients": true}})", &c).ok());
  EXPECT_TRUE(check_supported(c).ok());
  add_run_notes(&c);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].rfind("/zero_optimization/zero_quantized_gradients: no effect at stage 2", 0), 0u) << c.notes[0];
  EXPECT_FALSE(c.zero.reduce.quantized_gradients);
}

TEST(Config, OverridesAreValidatedLikeTheFile) {
  Json root = Json::object();
  ASSERT_TRUE(apply_override(&root, "training.steps=50").ok());
  ASSERT_TRUE(apply_override(&root, "data.train=data/x.bin").ok());
  ASSERT_TRUE(apply_override(&root, "model.n_layer=\"3\"").ok());
  EXPECT_EQ(root["training"]["steps"], 50);
  EXPECT_EQ(root["data"]["train"], "data/x.bin");
  auto c = parse_config(root);
  EXPECT_EQ(c.status().message(), R"(/model/n_layer: expected an integer 1..1024, got "3")");
  EXPECT_FALSE(apply_override(&root, "novalue").ok());
}

// Spellings DeepSpeed accepts in real configs: each is read, with one banner note
// saying what it does here; a typo beside them is still refused.
TEST(Config, DeepSpeedSpellingsAreAcceptedWithANote) {
  struct Case {
    const char* text;
    const char* note;  // the start of the note
  };
  const Case cases[] = {
      {R"({"pipeline": {"partition": {"type": "uniform"}}})", R"(/pipeline/partition: {"type": "uniform"} read as "uniform")"},
      {R"({"zero_optimization": {"stage": 3, "sub_group_size": 0}})", "/zero_optimization/sub_group_size: 0 -> one sub-group"},
      {R"({"bf16": {"enabled": true, "loss_scale": 0, "loss_scale_window": 1000, "hysteresis": 2, "min_loss_scale": 1,
                    "initial_scale_power": 16, "consecutive_hysteresis": false}})", "/bf16/"},
      {R"({"fp16": {"enabled": true, "opt_level": "O2"}})", "/fp16/opt_level: no effect here"},
  };
  for (const Case& c : cases) {
    ZtConfig cfg;
    ASSERT_TRUE(parse_text(c.text, &cfg).ok()) << c.text << ": " << parse_text(c.text).to_string();
    bool found = false;
    for (const std::string& n : cfg.notes) found = found || n.rfind(c.note, 0) == 0;
    EXPECT_TRUE(found) << c.text;
  }
  ZtConfig uniform;
  ASSERT_TRUE(parse_text(cases[0].text, &uniform).ok());
  EXPECT_EQ(uniform.parallel.partition_method, "uniform");
  ZtConfig bf16;
  ASSERT_TRUE(parse_text(cases[2].text, &bf16).ok());
  EXPECT_EQ(bf16.notes.size(), 6u);  // one per loss-scale key
  expect_error(R"({"pipeline": {"partition": {"typ": "uniform"}}})", "/pipeline/partition/typ: unknown key; allowed here: type");
  expect_error(R"({"pipeline": {"partition": {"type": "fast"}}})",
               R"(/pipeline/partition/type: expected one of "parameters", "uniform", "best", got "fast")");
  const Status typo = parse_text(R"({"bf16": {"loss_scal": 0}})");
  EXPECT_EQ(typo.message().rfind("/bf16/loss_scal: unknown key; allowed here: ", 0), 0u) << typo.message();
  expect_error(R"({"fp16": {"opt_level": "O4"}})", R"(/fp16/opt_level: expected one of "O0", "O1", "O2", "O3", got "O4")");
}

}  // namespace
}  // namespace zt
