// The training run behind `zerotrain train`, on one process or on every rank of an
// mpirun job (data parallel, any ZeRO stage). Rank 0 prints and writes; every rank trains.
#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "backend/peak.h"
#include "cli/autotune.h"
#include "cli/comms_logger.h"
#include "cli/config_input.h"
#include "engine/demo.h"
#include "cli/exit_status.h"
#include "cli/flops_profiler.h"
#include "engine/host_map.h"
#include "cli/metrics_csv.h"
#include "cli/monitors.h"
#include "cli/progress.h"
#include "cli/ps_command.h"
#include "engine/run_inputs.h"
#include "cli/run_report_json.h"
#include "cli/task_progress.h"
#include "cli/train_observer.h"
#include "comm/mpi_world.h"
#include "config/config.h"
#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "core/threads.h"
#include "core/timer.h"
#include "core/version.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "engine/parallel_setup.h"
#include "engine/rank_sync.h"
#include "engine/run_checkpoints.h"
#include "engine/run_config.h"
#include "engine/run_report.h"
#include "engine/run_session.h"
#include "engine/thread_pinning.h"
#include "engine/sampling.h"
#include "engine/trainer.h"
#include "engine/training_loop.h"
#include "io/filesystem.h"

namespace zt {

namespace {

// Entropy (nats/token) of the training split's token frequencies: the loss of the best
// model that ignores context.
double unigram_entropy(const TokenDataset& d, int vocab) {
  std::vector<double> count(static_cast<size_t>(vocab), 0.0);
  double n = 0.0;
  for (const TokenFile& f : d.shards()) {
    for (size_t i = 0; i < f.size(); ++i) count[f[i]] += 1.0;
    n += static_cast<double>(f.size());
  }
  double h = 0.0;
  for (double c : count) {
    if (c > 0.0) h -= c / n * std::log(c / n);
  }
  return h;
}

// One `zerotrain train` run: the engine's session (ranks, groups, inputs, Trainer) plus
// the job's peak, which this command's output reports. The functions below fill
// it step by step; each returns std::nullopt to go on, or the process's exit status.
struct Session : RunSession {
  double peak = 0.0;  // the job's compute peak (rank 0), FLOP/s
  PinningResult pinning;  // where this rank's compute threads run
};
using Next = std::optional<int>;

// The rank grid and, under mpirun, the MPI world and its groups (engine/run_session.h).
Next start_ranks(Session* s) {
  if (Status st = plan_ranks(s); !st.ok()) return report_error(st, kExitBadInput);
  if (Status st = join_mpi(s); !st.ok()) return report_error(st, kExitFailure);
  return std::nullopt;
}

// Tokenizer and data (the demo's prepared by rank 0 first), then DeepSpeed's autotuner.
Next open_inputs(Session* s, const TrainCommandArgs& args, const Json& root) {
  if (s->cfg.training.threads > 0) set_num_threads(s->cfg.training.threads);
  s->pinning = pin_compute_threads(s->cfg.training.pin_threads);
  Status st;
  if (!(st = load_tokenizer(s, args.config_path.empty())).ok()) return report_error(st, kExitBadInput);
  if (!(st = inputs_ready(s)).ok()) return report_error(st, kExitFailure);  // the demo's files are written
  if (!(st = open_data(s)).ok()) return report_error(st, kExitBadInput);
  if (!s->cfg.autotuning.enabled) return std::nullopt;
  const AutotuneRun tune{&root, &s->cfg, &*s->data.train, launched_by_mpi() ? &s->groups : nullptr, &s->grid,
                         s->partition, s->rank, s->lead, !args.resume.empty()};
  auto best = autotune(tune);
  if (!best.ok()) return report_error(best.status(), kExitBadInput);
  auto tuned = load_run_config(*best, s->world_size);
  if (!tuned.ok()) return report_error(tuned.status(), kExitBadInput);
  s->cfg.zero = tuned->zero;  // the tuned stage with its stage-dependent defaults
  s->cfg.batch = tuned->batch;
  s->cfg.source = tuned->source;
  return std::nullopt;
}

// The Trainer for this rank's part, fresh or restored (--resume, --init).
Next create_trainer(Session* s, const TrainCommandArgs& args) {
  TaskProgress progress("checkpoint load", s->lead && Progress::stdout_is_terminal());
  const Status st = create_trainer(s, RestoreRequest{args.resume, args.init}, s->lead ? progress.fn() : ProgressFn{});
  progress.finish();
  if (!st.ok()) return report_error(st, kExitBadInput);
  return std::nullopt;
}

// Rank 0's banner: hosts, model, data, batch, backend and the run's notes.
void print_banner(const Session& s, const std::string& host_map) {
  const ZtConfig& cfg = s.cfg;
  const Trainer& trainer = *s.trainer;
  const TokenDataset& train = *s.data.train;
  std::printf("%s\n", host_map.c_str());
  std::printf("model: %s, %.2f M parameters; data: %lld train tokens (%lld sequences of %d)%s\n",
              cfg.model.to_string().c_str(), cfg.model.num_parameters() / 1e6,
              static_cast<long long>(train.num_tokens()), static_cast<long long>(train.num_windows()), cfg.data.seq_len,
              s.data.val ? (", " + std::to_string(s.data.val->num_tokens()) + " val tokens").c_str() : "");
  std::printf("batch: %lld sequences = micro-batch %lld x accumulation %lld x data-parallel %d; ZeRO stage %d; "
              "%lld steps; %d threads per rank; %s\n",
              static_cast<long long>(cfg.batch.train_batch_size), static_cast<long long>(cfg.batch.micro_batch),
              static_cast<long long>(cfg.batch.grad_accum), cfg.parallel.dp / cfg.parallel.sp, static_cast<int>(cfg.zero.stage),
              static_cast<long long>(cfg.training.steps), num_threads(), isa_name(active_isa()));
  std::printf("backend: %s\n", trainer.backend().describe().c_str());
  std::printf("cpus: %s; rank 0's threads %s\n", s.pinning.topology.c_str(), s.pinning.decision.c_str());
  bool thp_slow = false;
  const std::string thp = describe_thp(&thp_slow);
  if (thp_slow) std::printf("memory: transparent huge pages %s\n", thp.c_str());
  print_config_notes(cfg);
  if (cfg.zero.offload.optimizer_device == OffloadDevice::kCpu || cfg.zero.offload.param_device == OffloadDevice::kCpu) {
    std::printf("offload: device \"cpu\" asked for; on a CPU-only run the optimizer state and parameters already "
                "live in host memory, so nothing is moved\n");
  }
  if (const std::string d = trainer.offload_description(); !d.empty()) std::printf("offload: %s\n", d.c_str());
  for (const std::string& n : trainer.notes()) std::printf("config: %s\n", n.c_str());
  if (cfg.activation_checkpointing.cpu_checkpointing && s.topts.activation_swap_dir.empty()) {
    std::printf("offload: cpu_checkpointing asked for without an NVMe offload path; on a CPU-only run the "
                "checkpointed activations already live in host memory, so nothing is moved\n");
  }
}

// The rest of the banner: the loss scaler, the GEMM warning, model parallelism, checkpointing.
void print_run_shape(const Session& s) {
  const ZtConfig& cfg = s.cfg;
  if (const LossScaler* ls = s.trainer->loss_scaler()) {
    const LossScalerOptions& p = cfg.precision.loss_scaler;
    if (ls->dynamic()) {
      std::printf("fp16 loss scale: dynamic, now %g (initial 2^%d, window %lld, hysteresis %d, min %g)\n", ls->scale(),
                  p.initial_scale_power, static_cast<long long>(p.loss_scale_window), p.hysteresis, p.min_loss_scale);
    } else {
      std::printf("fp16 loss scale: static %g\n", ls->scale());
    }
  }
  if (const std::string w = backend_warning(s.trainer->backend()); !w.empty()) std::printf("warning: %s\n", w.c_str());
  if (cfg.parallel.pp > 1 || cfg.parallel.tp > 1) {
    const int v = cfg.parallel.virtual_stages;
    std::printf("model parallel: pp %d (%s%s schedule, %s partition), tp %d\n", cfg.parallel.pp,
                v > 1 ? ("interleaved " + std::to_string(v) + "-chunk ").c_str() : "",
                cfg.parallel.pipeline_schedule.c_str(), cfg.parallel.partition_method.c_str(), cfg.parallel.tp);
  }
  if (cfg.model.moe.enabled() && cfg.parallel.tp > 1) {
    std::printf("experts with tp %d: the MoE MLP is replicated and each tp rank computes it whole on the same tokens "
                "(DeepSpeed splits those tokens among the tp ranks instead)\n", cfg.parallel.tp);
  }
  if (const CommDType w = cfg.zero.reduce.wire; w != CommDType::kF32) {
    std::printf("gradient reduction in %s (communication_data_type): each bucket is rounded to 16 bits and summed in 16 "
                "bits, at every dp size (fp32 accumulation within a rank)\n", comm_dtype_name(w));
  }
  if (const int ep = cfg.parallel.ep; ep > 1) {
    const int E = cfg.model.moe.num_experts, edp = cfg.parallel.dp / ep;
    std::printf("expert parallel: ep %d (%d of %d experts per rank), expert-data-parallel %d%s\n", ep, E / ep, E, edp,
                cfg.zero.stage == ZeroStage::kNone
                    ? ""
                    : ("; ZeRO shards every tensor over the expert-data-parallel ranks: the dense states 1/" +
                       std::to_string(edp) + " per rank, not DeepSpeed's 1/" + std::to_string(cfg.parallel.dp))
                          .c_str());
  }
  if (const int sp = cfg.parallel.sp; sp > 1) {
    std::printf("sequence parallel (Ulysses): sp %d, %d of %d tokens per sequence and %d of %d heads in attention per "
                "rank; gradients reduce and ZeRO partitions over dp x sp = %d ranks\n", sp, cfg.data.seq_len / sp,
                cfg.data.seq_len, cfg.model.n_head / sp, cfg.model.n_head, cfg.parallel.dp);
  }
  if (!s.topts.checkpoint.empty()) {
    int n = 0;
    for (bool b : s.topts.checkpoint) n += b;
    std::printf("activation checkpointing: %d of %d blocks%s\n", n, cfg.model.n_layer,
                s.topts.partition_activations ? ", inputs partitioned over tp" : "");
  }
}

// A checkpoint of the current step, rank 0's shard reported in plain lines (the training
// status line may be open on the terminal).
Status save_with_progress(const Session& s) {
  TaskProgress progress("checkpoint save (rank 0's shard)", /*tty=*/false);
  const Status st = save_run(*s.trainer, s.cfg, s.lead, s.lead ? progress.fn() : ProgressFn{});
  progress.finish();
  return st;
}

// The loop (engine/training_loop.h), observed by this command's output.
Next train_steps(Session* s, const TrainCommandArgs& args, LoopResult* out) {
  const ZtConfig& cfg = s->cfg;
  const TrainingConfig& tc = cfg.training;
  Trainer& trainer = *s->trainer;
  auto csv = (s->lead && tc.metrics_csv)
                 ? MetricsCsv::open(tc.output_dir + "/metrics.csv", !args.resume.empty(), trainer.global_step(),
                                    std::string("zerotrain ") + kZerotrainVersion + ", " + trainer.backend().describe(),
                                    cfg.model.moe.enabled())
                 : StatusOr<MetricsCsv>(Status::NotFound("disabled"));
  if (s->lead && tc.metrics_csv && !csv.ok()) return report_error(csv.status(), kExitBadInput);
  std::unique_ptr<Monitors> monitors;  // rank 0; every rank joins the per-step RSS gather
  if (s->lead && Monitors::any_enabled(cfg)) {
    auto m = Monitors::open(cfg);
    if (!m.ok()) return report_error(m.status(), kExitBadInput);
    monitors = std::move(m).value();
    std::printf("monitors: %s\n", monitors->describe().c_str());
  }
  // A GPU's datasheet rate, else this CPU's measured peak (rank 0 only: it takes 0.3 s).
  s->peak = s->lead ? rank_peak_flops(trainer.backend(), num_threads(), 0.3) * s->world_size : 0.0;
  const int64_t print_every = cfg.steps_per_print > 0 ? cfg.steps_per_print : std::max<int64_t>(1, tc.steps / 20);
  // Under mpirun, stdout is a pseudo-terminal of the launcher even when piped: plain lines.
  Progress progress(tc.steps, print_every, s->lead && Progress::stdout_is_terminal() && !launched_by_mpi());
  TrainObserver observer({&cfg, &trainer, &s->groups, s->lead, s->peak, s->world_size, print_every, &progress,
                          csv.ok() ? &csv.value() : nullptr, monitors.get()});
  const TrainingLoop loop{&trainer, &cfg, &*s->data.train,
                          s->data.val ? as_micro_batches(s->data.val_batches) : std::vector<MicroBatch>{},
                          s->groups.world, s->comm_groups, s->grid.data_rank(s->rank),
                          [s] { return save_with_progress(*s); }};
  auto ran = run_training_loop(loop, &observer);
  if (!ran.ok()) return report_error(ran.status(), kExitFailure);
  *out = ran.value();
  if (s->lead) progress.finish();
  return std::nullopt;
}

// The end (the loop saved the last step): the run report (collective), then rank 0's
// summary and sample.
int finish_run(Session* s, const LoopResult& r) {
  const ZtConfig& cfg = s->cfg;
  const TrainingConfig& tc = cfg.training;
  Trainer& trainer = *s->trainer;
  Status st;
  const bool model_parallel = cfg.parallel.pp > 1 || cfg.parallel.tp > 1 || cfg.parallel.ep > 1;
  auto end = end_run(s, tc.sample_tokens > 0 && !r.stopped && !model_parallel);
  if (!end.ok()) return report_error(end.status(), kExitFailure);
  if (!s->lead) return kExitOk;
  std::vector<float>& full = end->full_params;
  std::fputs(end->report.c_str(), stdout);
  const std::string comms = comms_summary(s->comm_groups, cfg.comms_logger);
  if (cfg.comms_logger.enabled) std::fputs(comms.c_str(), stdout);
  if (!(st = write_run_report_json(cfg, s->world_size, trainer, end->ranks, comms, s->peak)).ok()) return report_error(st, kExitFailure);
  if (r.last_val) {
    const double h = unigram_entropy(*s->data.train, cfg.model.vocab_size);
    std::printf("unigram entropy of the training split: %.4f nats/token; final validation loss: %.4f (%s)\n", h,
                *r.last_val, *r.last_val < h ? "below: the model uses context" : "NOT below");
  }
  if (r.stopped) {
    std::printf("stopped by signal after step %lld; continue with --resume %s\n",
                static_cast<long long>(trainer.global_step()), tc.checkpoint_dir().c_str());
    return kExitOk;
  }
  if (tc.sample_tokens == 0) return kExitOk;
  if (model_parallel) {  // the model is split over ranks: the sample reads the whole model back from the checkpoint
    if (r.saved_step != trainer.global_step()) {
      std::printf("no sample: the model is split over pipeline/tensor/expert-parallel ranks and no checkpoint of the last "
                  "step was saved\n");
      return kExitOk;
    }
    if (!(st = read_back_weights(cfg, &full)).ok()) return report_error(st, kExitFailure);
  }
  print_sample(cfg, *s->tok, full.data());
  return kExitOk;
}

}  // namespace

int run_train(const TrainCommandArgs& args) {
  auto root = load_config_json(args);  // every failure before the trainer is the user's input (exit 2)
  if (!root.ok()) return report_error(root.status(), kExitBadInput);
  // Parameter-server jobs resolve the batch over their workers, not the whole world.
  if (param_server_requested(root.value())) return run_param_server_train(args, root.value());
  auto config = load_run_config(root.value(), launched_by_mpi() ? launched_world_size() : 1);
  if (!config.ok()) return report_error(config.status(), kExitBadInput);
  if (args.print_config) {  // every rank would print the same: only the first (or a lone process)
    if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK"); r == nullptr || std::string(r) == "0") {
      print_resolved_config(*config);
    }
    return 0;
  }
  Session s;
  s.cfg = std::move(config).value();
  if (Next e = start_ranks(&s)) return *e;
  if (Next e = open_inputs(&s, args, root.value())) return *e;
  if (Next e = create_trainer(&s, args)) return *e;
  if (s.lead) {
    print_banner(s, s.host_map);
    print_run_shape(s);
  }
  LoopResult ran;
  if (Next e = train_steps(&s, args, &ran)) return *e;
  return finish_run(&s, ran);
}

Command add_train_command(CLI::App& app) {
  auto train = std::make_shared<TrainCommandArgs>();
  auto demo = std::make_shared<bool>(false);
  CLI::App* t = app.add_subcommand("train", "Train a model (no --config: the built-in demo on Debian's fortunes)");
  t->add_option("-c,--config", train->config_path, "ds_config.json with model/data/training sections");
  t->add_option("--set", train->overrides, "Override a config key: key.path=value (JSON value), repeatable");
  t->add_option("--device", train->device, "cpu (default), cuda, or auto (cuda where a GPU is usable): training.device")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  t->add_option("--resume", train->resume, "Continue from a checkpoint (a tag directory or a save directory), in any layout");
  t->add_option("--init", train->init,
                "Start from weights only: a checkpoint, or a HuggingFace GPT-2 or Llama model (its directory, "
                "model.safetensors or model.safetensors.index.json)");
  t->add_flag("--print-config", train->print_config, "Print the resolved configuration (aliases mapped, \"auto\" "
                                                     "resolved) as JSON and stop");
  t->add_flag("--demo", *demo, "Run the built-in demo (the default when --config is absent)");
  t->callback([train, demo] {
    if (*demo) train->config_path.clear();
  });
  return {t, [train] { return run_train(*train); }, true};
}

}  // namespace zt
