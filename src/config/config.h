// ZtConfig: one training run's configuration, read from a DeepSpeed ds_config.json with
// DeepSpeed's vocabulary and defaults, plus zerotrain's own sections ("model", "data",
// "training") in the same file. parse_config() validates every key (unknown, wrong type,
// out of range -> InvalidArgument naming the JSON pointer, the value and what is
// allowed); resolve_batch() applies DeepSpeed's batch-size arithmetic for a data-parallel
// size; check_supported() refuses, naming the key, any feature zerotrain lacks so far.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "io/aio_config.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "io/json_strict.h"
#include "config/normalize.h"
#include "data/efficiency_options.h"
#include "nn/gpt_config.h"
#include "optim/adamw.h"
#include "optim/lamb_options.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
#include "parallel/data/zero_options.h"
#include "parallel/param_server/ps_options.h"

namespace zt {

// DeepSpeed's train_batch_size / train_micro_batch_size_per_gpu / gradient_accumulation_steps.
// 0 = not given. After resolve_batch all three are set and consistent.
// A key may also be "auto" (HuggingFace's convention): resolve_batch treats it as not
// given, except that when neither train_batch_size nor the micro-batch is a number, an
// "auto" one of them means HuggingFace's per_device_train_batch_size default, 8.
struct BatchConfig {
  int64_t train_batch_size = 0;
  int64_t micro_batch = 0;
  int64_t grad_accum = 0;
  bool train_batch_size_auto = false;
  bool micro_batch_auto = false;
  bool grad_accum_auto = false;
};

// DeepSpeed's tensorboard / csv_monitor blocks (monitor/config.py defaults). Rank 0
// writes to <output_path>/<job_name>; an empty output_path means
// <training.output_dir>/tensorboard (or /csv_monitor).
struct MonitorConfig {
  bool enabled = false;
  std::string output_path;
  std::string job_name = "DeepSpeedJobName";
};

// DeepSpeed's comms_logger block (cli/comms_logger.h says what each key does here).
struct CommsLoggerConfig {
  bool enabled = false;
  bool verbose = false;
  bool prof_all = true;
  bool debug = false;
  std::vector<std::string> prof_ops;
};

// DeepSpeed's flops_profiler block (cli/flops_profiler.h).
struct FlopsProfilerConfig {
  bool enabled = false;
  int64_t profile_step = 1;
  int64_t module_depth = -1;  // -1: every depth
  int64_t top_modules = 1;
  bool detailed = true;
  std::string output_file;    // empty: stdout
};

struct PrecisionConfig {
  bool fp16 = false;
  bool bf16 = false;
  LossScalerOptions loss_scaler;  // the fp16 section's scaler keys, into the scaler's own options (optim/loss_scaler.h)
};

// DeepSpeed's activation_checkpointing section. Checkpointing is on when the section
// sets number_checkpoints (that many blocks, spread evenly over the model) or
// pipeline.activation_checkpoint_interval (every k-th block).
struct ActivationCheckpointConfig {
  bool partition_activations = false;
  bool cpu_checkpointing = false;
  int64_t number_checkpoints = 0;  // 0 = not set
  int64_t interval = 0;            // pipeline.activation_checkpoint_interval; 0 = not set
};

struct DataConfig {
  std::vector<std::string> train;  // files or globs, one split may span several shards
  std::vector<std::string> val;
  std::string format = "auto";     // auto | llmc | raw_uint16
  std::string tokenizer = "gpt2";  // gpt2 | byte
  std::string bpe_dir;             // empty: default location
  int seq_len = 256;
};

struct TrainingConfig {
  int64_t steps = 1000;
  int64_t eval_interval = 100;  // 0 = no periodic validation
  int64_t eval_batches = 8;
  std::string output_dir = "out";
  uint64_t seed = 1234;
  int threads = 0;  // 0 = OMP_NUM_THREADS / all cores
  bool pin_threads = true;  // pin the compute threads to CPUs where that is safe (core/cpu_topology.h)
  std::string device = "cpu";  // "cpu", "cuda" or "auto" (cuda where a GPU is usable); --device sets it
  std::string attention = "materialized";  // "materialized" (saves T x T) or "flash" (the CPU's flash attention)
  bool metrics_csv = true;
  int64_t sample_tokens = 0;  // > 0: print a sample of this many tokens at the end
  std::string sample_prompt = "\n";
  double sample_temperature = 0.8;
  int sample_top_k = 40;
  bool save_at_end = true;
  int64_t save_interval = 0;  // > 0: a checkpoint every this many steps
  int64_t keep_last = 0;      // > 0: delete older checkpoints beyond the newest keep_last
  std::string save_dir;       // "" = <output_dir>/checkpoints
  std::string checkpoint_dir() const { return save_dir.empty() ? output_dir + "/checkpoints" : save_dir; }
};

// zerotrain's "parallel" section: the layout of the ranks launched by mpirun.
struct ParallelConfig {
  int dp = 0;  // 0 = "auto": world size / (pp * tp)
  int pp = 1;
  int tp = 1;
  int ep = 1;  // expert parallelism, from /model/moe/ep_size (a divisor of dp; MoE models only)
  int sp = 1;  // Ulysses sequence parallelism, DeepSpeed's /sequence_parallel_size (a divisor of dp:
               // dp counts every rank of a pipeline stage's tp slice; dp / sp read different sequences)
  CommAlgorithm algorithm = CommAlgorithm::kRing;  // "allreduce_algorithm": "ring" (default) | "mpi"
  std::string pipeline_schedule = "1f1b";          // "1f1b" | "gpipe"
  int virtual_stages = 1;  // interleaved 1F1B: model chunks per pipeline rank (also DeepSpeed-style /pipeline/virtual_stages)
  std::string partition_method = "flops";          // "flops" (compute-balanced), "parameters" (DeepSpeed's default), "uniform"
  double comm_timeout_s = 600.0;
  int64_t ring_chunk_bytes = 1 << 20;
};

// zerotrain's "parameter_server" section (issue 7): S server ranks and W worker ranks
// instead of all-reduce, parsed into the parameter server's own options
// (parallel/param_server/ps_options.h; ps_section.cc documents the keys).
struct ParameterServerConfig {
  bool enabled = false;  // the section is present and "enabled" is not false
  PsOptions options;     // bucket_elems and deadline_s resolved by parse_config when unset
};

// DeepSpeed's `autotuning` block (autotuning/config.py), answered by zerotrain's planner
// and short trial runs (cli/autotune.h). The tuning space: the ZeRO stages and micro-batch
// sizes the user listed (a list value in the file), else the user's stage and sizes derived
// from the limits below.
struct AutotuningConfig {
  bool enabled = false;
  bool fast = true;
  std::string results_dir = "autotuning_results";
  std::string exps_dir = "autotuning_exps";
  bool overwrite = true;  // DeepSpeed's code default (its docs say false)
  std::string metric = "throughput";  // or "latency"
  int64_t start_profile_step = 3;
  int64_t end_profile_step = 5;
  int64_t max_train_batch_size = 0;  // 0: not given
  int64_t min_micro_batch = 1;
  int64_t max_micro_batch = 1024;
  int64_t num_tuning_micro_batch_sizes = 3;
  int64_t tuner_num_trials = 50;
  std::vector<int64_t> micro_batches;  // the user's list, if any
  std::vector<int> stages;             // the user's stage list ("all": 0-3); empty: the config's stage
};

struct ZtConfig {
  BatchConfig batch;
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  AdamWOptions adamw;
  SgdOptions sgd;
  LambOptions lamb;      // Lamb
  OneBitOptions onebit;  // OneBitAdam, ZeroOneAdam, OneBitLamb
  LrScheduleOptions schedule;
  double gradient_clipping = 1.0;
  int64_t steps_per_print = 0;  // 0 = DeepSpeed's None
  bool wall_clock_breakdown = false;
  ZeroOptions zero;  // zero_optimization, parsed into the modules' own options (parallel/data/zero_options.h)
  PrecisionConfig precision;
  ActivationCheckpointConfig activation_checkpointing;
  MonitorConfig tensorboard;
  MonitorConfig csv_monitor;
  CommsLoggerConfig comms_logger;
  FlopsProfilerConfig flops_profiler;
  ParallelConfig parallel;
  ParameterServerConfig parameter_server;
  GptConfig model;
  DataConfig data;
  TrainingConfig training;
  EfficiencyOptions efficiency;  // curriculum learning, progressive layer drop, random-LTD
  AutotuningConfig autotuning;
  Json source;  // the configuration as given (after overrides), for checkpoints and logs
  Json resolved;  // after aliases and "auto" (resolve_batch fills in the batch triple)
  std::vector<std::string> notes;  // what the aliases and "auto" changed, one line each (the banner prints them)
  Device device = Device::kCpu;    // training.device resolved (cli/run_setup.cc resolve_device)
  bool device_planned = false;     // device is described, not opened (estimate, plan: RunPurpose::kPlan)
};

// Validates and reads a whole config: aliases and "auto" first (normalize.h), then every
// section. Does not resolve the batch triple. ctx: what "auto" may depend on besides
// the file (default: this machine).
StatusOr<ZtConfig> parse_config(const Json& root);
StatusOr<ZtConfig> parse_config(const Json& root, const AutoContext& ctx);
// Strict JSON text (`label` names it in errors), then parse_config.
StatusOr<ZtConfig> parse_config_text(const std::string& text, const std::string& label);

// DeepSpeed's batch arithmetic: train_batch_size = micro_batch x grad_accum x dp_size,
// any two given determine the third; one alone sets grad_accum = 1. "auto" keys as
// BatchConfig says; each resolved "auto" adds a line to notes (when not null).
Status resolve_batch(BatchConfig* batch, int dp_size, std::vector<std::string>* notes = nullptr);

// Notes for keys accepted with no effect in this combination (offload_param below
// stage 3, cpu_checkpointing with no checkpointed block), as DeepSpeed ignores them.
void add_run_notes(ZtConfig* c);

// resolve_batch for the config's own parallel.dp, with its notes, writing the triple
// into c->resolved.
Status resolve_config_batch(ZtConfig* c);

// Resolves parallel.dp = "auto" for world_size ranks and checks dp x pp x tp == world.
Status resolve_parallel(ParallelConfig* parallel, int world_size);

// Which blocks activation checkpointing covers (per block; empty when it is off).
std::vector<bool> checkpointed_blocks(const ActivationCheckpointConfig& a, int n_layer);

// Refuses features zerotrain does not have yet, naming the key (e.g. fp16, offload).
Status check_supported(const ZtConfig& config);

// Reads a JSON file strictly (duplicate keys are errors).
StatusOr<Json> load_json_file(const std::string& path);

// Applies "a.b.c=value" to root: value is parsed as JSON, or taken as a string if it is
// not valid JSON. Intermediate objects are created.
Status apply_override(Json* root, const std::string& assignment);

}  // namespace zt
