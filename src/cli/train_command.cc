// The training run behind `zerotrain train`, on one process or on every rank of an
// mpirun job (data parallel, any ZeRO stage). Rank 0 prints and writes; every rank trains.
#include "cli/train_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "cli/autotune.h"
#include "cli/demo.h"
#include "cli/exit_status.h"
#include "cli/metrics_csv.h"
#include "cli/monitors.h"
#include "cli/comms_logger.h"
#include "cli/flops_profiler.h"
#include "cli/progress.h"
#include "cli/run_checkpoints.h"
#include "cli/run_inputs.h"
#include "cli/ps_command.h"
#include "cli/run_report.h"
#include "cli/run_setup.h"
#include "cli/train_observer.h"
#include "cli/host_map.h"
#include "comm/mpi_world.h"
#include "config/config.h"
#include "core/cpu_features.h"
#include "core/threads.h"
#include "core/timer.h"
#include "core/version.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "engine/parallel_setup.h"
#include "engine/sampling.h"
#include "engine/trainer.h"
#include "engine/training_loop.h"
#include "io/filesystem.h"
#include "kernels/cpu/fma_peak.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/gemm_path.h"

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

// The compute peak relative to the fp32 FMA peak: bf16 on AVX-512 BF16 does two products
// per fp32 lane per instruction (vdpbf16ps), so twice; on AMX the tile rate is not
// measured here, so no MFU is shown (0); fp32, f16 (fp32 GEMMs) and the bf16 fallback: 1.
double peak_factor(DType compute) {
  if (compute != DType::kBF16) return 1.0;
  const StatusOr<std::string> impl = bf16_gemm_impl(256, 256, 256);
  if (!impl.ok() || impl.value().find("fallback") != std::string::npos) return 1.0;
  return impl.value().find("amx") != std::string::npos ? 0.0 : 2.0;
}

}  // namespace

int run_train(const TrainCommandArgs& args) {
  // 1. Configuration, tokenizer and data: every failure here is the user's input (exit 2).
  auto root = load_config_json(args);
  if (!root.ok()) return report_error(root.status(), kExitBadInput);
  // Parameter-server jobs resolve the batch over their workers, not the whole world.
  if (param_server_requested(root.value())) return run_param_server_train(args, root.value());
  auto config_or = load_run_config(root.value(), launched_by_mpi() ? launched_world_size() : 1);
  if (!config_or.ok()) return report_error(config_or.status(), kExitBadInput);
  ZtConfig cfg = std::move(config_or).value();
  if (args.print_config) {  // every rank would print the same: only the first (or a lone process)
    if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK"); r == nullptr || std::string(r) == "0") {
      print_resolved_config(cfg);
    }
    return 0;
  }
  const TrainingConfig& tc = cfg.training;
  const int world_size = cfg.parallel.dp * cfg.parallel.pp * cfg.parallel.tp;
  auto grid_or = RankGrid::create(world_size, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp);
  if (!grid_or.ok()) return report_error(grid_or.status(), kExitBadInput);
  const RankGrid grid = grid_or.value();
  const StagePartition partition = stage_partition(cfg);
  if (auto lay = layout_for_rank(cfg.model, grid, 0, partition); !lay.ok()) return report_error(lay.status(), kExitBadInput);
  std::unique_ptr<MpiWorld> mpi;
  ParallelGroups groups;
  if (launched_by_mpi()) {
    CommOptions co;
    co.timeout_s = cfg.parallel.comm_timeout_s;
    co.algorithm = cfg.parallel.algorithm;
    co.ring_chunk_bytes = static_cast<size_t>(cfg.parallel.ring_chunk_bytes);
    auto world = MpiWorld::init(co);
    if (!world.ok()) return report_error(world.status(), kExitFailure);
    mpi = std::move(world).value();
    auto g = make_mpi_groups(*mpi, grid);
    if (!g.ok()) return report_error(g.status(), kExitFailure);
    groups = std::move(g).value();
  }
  ProcessGroup* dp = groups.world;  // for the barrier below; null on a single process
  const int rank = dp ? dp->rank() : 0;
  const bool lead = rank == 0;
  if (tc.threads > 0) set_num_threads(tc.threads);
  auto tok_or = prepare_inputs(&cfg, args.config_path.empty(), lead);
  if (!tok_or.ok()) return report_error(tok_or.status(), kExitBadInput);
  const Tokenizer& tok = *tok_or.value();
  Status s;
  if (dp != nullptr && !(s = dp->barrier()->wait()).ok()) return report_error(s, kExitFailure);  // demo data ready
  auto data_or = open_datasets(cfg);
  if (!data_or.ok()) return report_error(data_or.status(), kExitBadInput);
  const TokenDataset& train = *data_or->train;
  const std::optional<TokenDataset>& val = data_or->val;
  const std::vector<Batch>& val_batches = data_or->val_batches;

  if (cfg.autotuning.enabled) {  // DeepSpeed's autotuner: tune the stage and micro-batch, then train with the best
    const AutotuneRun tune{&root.value(), &cfg,      &train, launched_by_mpi() ? &groups : nullptr, &grid,
                           partition,     rank,      lead,   !args.resume.empty()};
    auto best = autotune(tune);
    if (!best.ok()) return report_error(best.status(), kExitBadInput);
    auto tuned = load_run_config(*best, world_size);
    if (!tuned.ok()) return report_error(tuned.status(), kExitBadInput);
    cfg.zero.stage = tuned->zero.stage;
    cfg.batch = tuned->batch;
    cfg.source = tuned->source;
  }

  // 2. Model and optimizer state (fresh or resumed).
  TrainerOptions topts = trainer_options(cfg);
  auto layout = layout_for_rank(cfg.model, grid, rank, partition);
  if (!layout.ok()) return report_error(layout.status(), kExitBadInput);
  topts.layout = layout.value();
  auto trainer_or = Trainer::create(topts, launched_by_mpi() ? &groups : nullptr);
  if (!trainer_or.ok()) return report_error(trainer_or.status(), kExitBadInput);
  Trainer& trainer = *trainer_or.value();
  const ParamTable& table = trainer.param_table();
  if (!(s = restore_run(trainer, cfg, args, lead)).ok()) return report_error(s, kExitBadInput);
  auto host_map = describe_host_map(groups.world);  // collective
  if (!host_map.ok()) return report_error(host_map.status(), kExitFailure);
  if (lead) {
    std::printf("%s\n", host_map->c_str());
    std::printf("model: %s, %.2f M parameters; data: %lld train tokens (%lld sequences of %d)%s\n",
                cfg.model.to_string().c_str(), cfg.model.num_parameters() / 1e6,
                static_cast<long long>(train.num_tokens()), static_cast<long long>(train.num_windows()),
                cfg.data.seq_len, val ? (", " + std::to_string(val->num_tokens()) + " val tokens").c_str() : "");
    std::printf("batch: %lld sequences = micro-batch %lld x accumulation %lld x data-parallel %d; ZeRO stage %d; "
                "%lld steps; %d threads per rank; %s\n",
                static_cast<long long>(cfg.batch.train_batch_size), static_cast<long long>(cfg.batch.micro_batch),
                static_cast<long long>(cfg.batch.grad_accum), cfg.parallel.dp, cfg.zero.stage,
                static_cast<long long>(tc.steps), num_threads(), isa_name(active_isa()));
    std::printf("backend: %s\n", trainer.backend().describe().c_str());
    print_config_notes(cfg);
    if (cfg.zero.offload_optimizer.device == "cpu" || cfg.zero.offload_param.device == "cpu") {
      std::printf("offload: device \"cpu\" asked for; on a CPU-only run the optimizer state and parameters already "
                  "live in host memory, so nothing is moved\n");
    }
    if (const std::string d = trainer.offload_description(); !d.empty()) std::printf("offload: %s\n", d.c_str());
    for (const std::string& n : trainer.notes()) std::printf("config: %s\n", n.c_str());
    if (cfg.activation_checkpointing.cpu_checkpointing && topts.activation_swap_dir.empty()) {
      std::printf("offload: cpu_checkpointing asked for without an NVMe offload path; on a CPU-only run the "
                  "checkpointed activations already live in host memory, so nothing is moved\n");
    }
    if (const LossScaler* ls = trainer.loss_scaler()) {
      const PrecisionConfig& p = cfg.precision;
      if (ls->dynamic()) {
        std::printf("fp16 loss scale: dynamic, now %g (initial 2^%d, window %lld, hysteresis %d, min %g)\n",
                    ls->scale(), p.fp16_initial_scale_power, static_cast<long long>(p.fp16_loss_scale_window),
                    p.fp16_hysteresis, p.fp16_min_loss_scale);
      } else {
        std::printf("fp16 loss scale: static %g\n", ls->scale());
      }
    }
    if (const std::string w = gemm_path().warning(); !w.empty()) std::printf("warning: %s\n", w.c_str());
    if (cfg.parallel.pp > 1 || cfg.parallel.tp > 1) {
      std::printf("model parallel: pp %d (%s schedule, %s partition), tp %d\n", cfg.parallel.pp,
                  cfg.parallel.pipeline_schedule.c_str(), cfg.parallel.partition_method.c_str(), cfg.parallel.tp);
    }
    if (!topts.checkpoint.empty()) {
      int n = 0;
      for (bool b : topts.checkpoint) n += b;
      std::printf("activation checkpointing: %d of %d blocks%s\n", n, cfg.model.n_layer,
                  topts.partition_activations ? ", inputs partitioned over tp" : "");
    }
  }

  // 3. The loop (engine/training_loop.h), observed by this command's output.
  const int64_t first_step = trainer.global_step();
  auto csv = (lead && tc.metrics_csv) ? MetricsCsv::open(tc.output_dir + "/metrics.csv", !args.resume.empty(), first_step,
                                                         std::string("zerotrain ") + kZerotrainVersion + ", " +
                                                             trainer.backend().describe())
                                      : StatusOr<MetricsCsv>(Status::NotFound("disabled"));
  if (lead && tc.metrics_csv && !csv.ok()) return report_error(csv.status(), kExitBadInput);
  std::unique_ptr<Monitors> monitors;  // rank 0; every rank joins the per-step RSS gather
  if (lead && Monitors::any_enabled(cfg)) {
    auto m = Monitors::open(cfg);
    if (!m.ok()) return report_error(m.status(), kExitBadInput);
    monitors = std::move(m).value();
    std::printf("monitors: %s\n", monitors->describe().c_str());
  }
  ProcessGroup& world_group = groups.world != nullptr ? *groups.world : trainer.dp();
  const double device_peak = trainer.backend().peak_flops();  // a GPU's datasheet rate, else measured here
  const double peak = !lead                ? 0.0
                      : device_peak > 0.0 ? device_peak * world_size
                                          : measure_fma_peak_gflops(num_threads(), 0.3) * 1e9 * world_size *
                                                peak_factor(trainer.backend().compute_dtype());
  const int64_t print_every = cfg.steps_per_print > 0 ? cfg.steps_per_print : std::max<int64_t>(1, tc.steps / 20);
  // Under mpirun, stdout is a pseudo-terminal of the launcher even when piped: plain lines.
  Progress progress(tc.steps, print_every, lead && Progress::stdout_is_terminal() && !launched_by_mpi());
  const std::vector<ProcessGroup*> comm_groups = {groups.world, groups.dp, groups.pp, groups.tp, groups.tied, &trainer.dp()};
  TrainObserver observer({&cfg, &trainer, &groups, lead, peak, world_size, print_every, &progress,
                          csv.ok() ? &csv.value() : nullptr, monitors.get()});
  const TrainingLoop loop{&trainer, &cfg, &train, val ? as_micro_batches(val_batches) : std::vector<MicroBatch>{},
                          groups.world, comm_groups, grid.coord(rank).dp, [&] { return save_run(trainer, cfg, lead); }};
  auto ran = run_training_loop(loop, &observer);
  if (!ran.ok()) return report_error(ran.status(), kExitFailure);
  int64_t saved_step = ran->saved_step;
  const bool stopping = ran->stopped;
  const std::optional<double> last_val = ran->last_val;
  if (lead) progress.finish();

  // 4. Checkpoint, reports, sample (collective parts first, then rank 0 alone).
  if (tc.save_at_end && trainer.global_step() > first_step && saved_step != trainer.global_step()) {
    if (!(s = save_run(trainer, cfg, lead)).ok()) return report_error(s, kExitFailure);
    saved_step = trainer.global_step();
  }
  const bool model_parallel = cfg.parallel.pp > 1 || cfg.parallel.tp > 1;
  std::vector<float> full;
  if (tc.sample_tokens > 0 && !stopping && !model_parallel) {
    full.resize(table.numel());
    if (!(s = trainer.gather_params(full.data())).ok()) return report_error(s, kExitFailure);
  }
  Json ranks;
  auto report = collect_run_report(trainer, world_group, &ranks);
  if (!report.ok()) return report_error(report.status(), kExitFailure);
  if (!lead) return kExitOk;
  std::fputs(report->c_str(), stdout);
  const std::string comms = comms_summary(comm_groups, cfg.comms_logger);
  if (cfg.comms_logger.enabled) std::fputs(comms.c_str(), stdout);
  if (!(s = write_run_report_json(cfg, world_size, trainer, ranks, comms, peak)).ok()) return report_error(s, kExitFailure);
  if (last_val) {
    const double h = unigram_entropy(train, cfg.model.vocab_size);
    std::printf("unigram entropy of the training split: %.4f nats/token; final validation loss: %.4f (%s)\n", h,
                *last_val, *last_val < h ? "below: the model uses context" : "NOT below");
  }
  if (stopping) {
    std::printf("stopped by signal after step %lld; continue with --resume %s\n",
                static_cast<long long>(trainer.global_step()), tc.checkpoint_dir().c_str());
    return kExitOk;
  }
  if (tc.sample_tokens > 0 && model_parallel) {
    // The model is split over ranks: the sample reads the whole model back from the checkpoint.
    if (saved_step != trainer.global_step()) {
      std::printf("no sample: the model is split over pipeline/tensor-parallel ranks and no checkpoint of the last step was saved\n");
      return kExitOk;
    }
    if (!(s = read_back_weights(cfg, &full)).ok()) return report_error(s, kExitFailure);
  }
  if (tc.sample_tokens > 0) print_sample(cfg, tok, full.data());
  return kExitOk;
}

}  // namespace zt
