// Parameter-server training behind `zerotrain train` (issue 7): configuration -> roles ->
// data -> servers serve / workers train -> validation on the final parameters -> report
// (rank 0), checkpoint (weights only) and sample (the first worker). Every rank runs it;
// a failure while running aborts the whole job, since peers would otherwise wait on the
// failed rank until their deadlines.


#include "backend/backend.h"
#include "checkpoint/sharded_save.h"
#include "cli/config_input.h"
#include "engine/demo.h"
#include "cli/exit_status.h"
#include "cli/progress.h"
#include "cli/ps_command.h"
#include "engine/run_inputs.h"
#include "comm/mpi_world.h"
#include "config/config.h"
#include "core/cpu_features.h"
#include "core/threads.h"
#include "core/timer.h"
#include "core/version.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "engine/run_config.h"
#include "engine/run_session.h"
#include "engine/sampling.h"
#include "io/filesystem.h"
#include "nn/gpt_model.h"
#include "parallel/param_server/ps_job.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace zt {

namespace {

// The configuration resolved for S servers and W = world - S workers (the data-parallel size).
StatusOr<ZtConfig> load_ps_config(const TrainCommandArgs& a, const Json& root, int world) {
  ZT_ASSIGN_OR_RETURN(ZtConfig c, parse_config(root));
  const PsOptions& ps = c.parameter_server.options;
  auto no = [](const std::string& ptr, const std::string& why) { return Status::Unimplemented(ptr + ": " + why); };
  if (!a.resume.empty()) return no("--resume", "continuing parameter-server training is not supported yet");
  if (!a.init.empty()) return no("--init", "starting parameter-server training from saved weights is not supported yet");
  if (c.training.save_interval > 0) {
    return no("/training/save_interval", "parameter-server runs save only at the end (save_at_end), weights only");
  }
  if (c.parallel.pp > 1 || c.parallel.tp > 1) {
    return no(c.parallel.pp > 1 ? "/parallel/pp" : "/parallel/tp",
              "parameter-server workers hold the whole model; pipeline and tensor parallelism do not combine with it");
  }
  if (c.zero.stage != ZeroStage::kNone) {
    return no("/zero_optimization/stage", "parameter-server training shards the optimizer state over the servers "
                                          "itself; use stage 0");
  }
  if (world <= ps.servers) {
    return Status::InvalidArgument("/parameter_server/servers: " + std::to_string(ps.servers) + " server(s) need at "
                                   "least " + std::to_string(ps.servers + 1) + " ranks (servers + workers), got " +
                                   std::to_string(world) + (launched_by_mpi() ? "" : ": launch with mpirun -np N"));
  }
  ZT_RETURN_IF_ERROR(resolve_parallel(&c.parallel, world - ps.servers));
  ZT_RETURN_IF_ERROR(resolve_config_batch(&c));
  ZT_RETURN_IF_ERROR(check_supported(c));
  return c;
}

PsModelOptions ps_model_options(const ZtConfig& c) {
  PsModelOptions o;
  static_cast<GptTrainingOptions&>(o) = gpt_training_options(c);
  o.grad_accum = static_cast<int>(c.batch.grad_accum);
  return o;
}

}  // namespace

bool param_server_requested(const Json& root) {
  if (!root.is_object() || !root.contains("parameter_server")) return false;
  const Json& ps = root["parameter_server"];
  if (!ps.is_object()) return true;  // parse_config names the error
  return !ps.contains("enabled") || !ps["enabled"].is_boolean() || ps["enabled"].get<bool>();
}

namespace {

// Rank 0's banner: model, data, roles, batch and backend.
void print_ps_banner(const ZtConfig& cfg, const PsOptions& pso, const TokenDataset& train, int world_size) {
  const int S = pso.servers, W = world_size - S;
  std::printf("model: %s, %.2f M parameters; data: %lld train tokens (%lld sequences of %d)\n",
              cfg.model.to_string().c_str(), cfg.model.num_parameters() / 1e6, static_cast<long long>(train.num_tokens()),
              static_cast<long long>(train.num_windows()), cfg.data.seq_len);
  std::printf("parameter server: %d server(s) (ranks 0..%d), %d worker(s) (ranks %d..%d), mode %s%s; batch: %lld "
              "sequences = micro-batch %lld x accumulation %lld x %d workers; %lld steps; %d threads per rank; %s\n",
              S, S - 1, W, S, world_size - 1, ps_mode_name(pso.effective_mode()),
              pso.mode == PsMode::kBounded ? (" (staleness " + std::to_string(pso.staleness) + ")").c_str() : "",
              static_cast<long long>(cfg.batch.train_batch_size), static_cast<long long>(cfg.batch.micro_batch),
              static_cast<long long>(cfg.batch.grad_accum), W, static_cast<long long>(cfg.training.steps), num_threads(),
              isa_name(active_isa()));
  std::printf("backend: %s (workers; the servers' optimizer runs in fp32)\n",
              backend_or_cpu(ps_model_options(cfg).backend).describe().c_str());
  std::fflush(stdout);
}

// The job: servers serve, workers train (the first worker shows progress).
StatusOr<PsRunResult> run_ps_job(const ZtConfig& cfg, const PsOptions& pso, const PsGroups& groups, const RunData& data,
                                 int world_size, bool lead_worker) {
  const TrainingConfig& tc = cfg.training;
  const int W = world_size - pso.servers;
  BatchSampler sampler(&*data.train, tc.seed, cfg.batch.train_batch_size, static_cast<int>(cfg.batch.micro_batch),
                       static_cast<int>(cfg.batch.grad_accum));
  std::vector<Batch> unit_storage;
  PsWorkerHooks hooks;
  hooks.unit_batches = [&](int64_t unit) -> StatusOr<std::vector<MicroBatch>> {
    unit_storage.clear();
    for (int m = 0; m < cfg.batch.grad_accum; ++m) unit_storage.push_back(sampler.micro_batch(unit / W, unit % W, m));
    return as_micro_batches(unit_storage);
  };
  const int64_t print_every = cfg.steps_per_print > 0 ? cfg.steps_per_print : std::max<int64_t>(1, tc.steps / 20);
  Progress progress(tc.steps, print_every, false);
  Stopwatch clock;
  const double tokens_per_step = static_cast<double>(cfg.batch.train_batch_size) * cfg.data.seq_len;
  int64_t last_printed = 0;
  hooks.on_step = [&](const PsWorkerStep& st) {
    const int64_t g = st.server0.global_step;  // global batches' worth of samples applied
    if (!lead_worker || g <= last_printed) return;
    last_printed = g;
    const double elapsed = clock.seconds();
    progress.update({g, st.loss, st.server0.lr, st.server0.grad_norm, g * tokens_per_step / elapsed, -1.0}, elapsed);
  };
  hooks.validation = as_micro_batches(data.val_batches);
  auto result = run_ps_rank(ps_model_options(cfg), pso, groups, tc.steps, &hooks, lead_worker);
  if (result.ok() && lead_worker) progress.finish();
  return result;
}

// The first worker, which holds the final parameters: the checkpoint (weights only) and the sample.
Status save_and_sample(const ZtConfig& cfg, const Tokenizer& tok, std::vector<float>* full) {
  const TrainingConfig& tc = cfg.training;
  if (tc.save_at_end) {
    SaveRequest req;
    req.save_dir = tc.checkpoint_dir();
    req.tag = step_tag(tc.steps);
    req.keep_last = static_cast<int>(tc.keep_last);
    req.meta.zerotrain_version = kZerotrainVersion;
    req.meta.model = cfg.model;
    req.meta.config = cfg.source;
    req.meta.engine.global_step = tc.steps;
    req.meta.engine.train_batch_size = cfg.batch.train_batch_size;
    req.meta.engine.seed = tc.seed;
    ZT_RETURN_IF_ERROR(save_whole_params(build_gpt_param_table(cfg.model), full->data(), req));
    std::printf("saved checkpoint %s/%s (weights only: the optimizer state lives on the servers)\n",
                req.save_dir.c_str(), req.tag.c_str());
  }
  if (tc.sample_tokens > 0) print_sample(cfg, tok, full->data());
  std::fflush(stdout);
  return Status::OK();
}

}  // namespace

int run_param_server_train(const TrainCommandArgs& args, const Json& root) {
  // 1. Configuration, roles, tokenizer and data: failures here are the user's input (exit 2).
  const int world_size = launched_by_mpi() ? launched_world_size() : 1;
  auto config_or = load_ps_config(args, root, world_size);
  if (!config_or.ok()) return report_error(config_or.status(), kExitBadInput);
  ZtConfig cfg = std::move(config_or).value();
  if (cfg.training.device != "cpu") {
    return report_error(Status::Unimplemented("/training/device: \"" + cfg.training.device + "\": the parameter server "
                                              "runs on the CPU only; use device cpu"),
                        kExitBadInput);
  }
  const PsOptions pso = cfg.parameter_server.options;
  if (Status v = validate_ps_job(pso, world_size); !v.ok()) return report_error(v, kExitBadInput);
  CommOptions co;
  co.timeout_s = cfg.parallel.comm_timeout_s;
  co.algorithm = cfg.parallel.algorithm;
  co.ring_chunk_bytes = static_cast<size_t>(cfg.parallel.ring_chunk_bytes);
  auto mpi_or = MpiWorld::init(co);
  if (!mpi_or.ok()) return report_error(mpi_or.status(), kExitFailure);
  std::unique_ptr<MpiWorld> mpi = std::move(mpi_or).value();
  const int rank = mpi->world().rank();
  const bool lead_worker = rank == pso.servers;
  if (cfg.training.threads > 0) set_num_threads(cfg.training.threads);
  RunSession in;  // the engine's input steps over the PS world (rank 0 prepares the demo's files)
  in.cfg = std::move(cfg);
  in.lead = rank == 0;
  in.groups.world = &mpi->world();
  Status st;
  if (!(st = load_tokenizer(&in, args.config_path.empty())).ok()) return report_error(st, kExitBadInput);
  if (!(st = inputs_ready(&in)).ok()) return report_error(st, kExitFailure);  // the demo's files are written
  if (!(st = open_data(&in)).ok()) return report_error(st, kExitBadInput);
  cfg = std::move(in.cfg);
  const RunData* data = &in.data;
  if (rank == 0) print_ps_banner(cfg, pso, *data->train, world_size);

  // 2. The job, then the report (rank 0), checkpoint and sample (the first worker).
  auto groups = make_ps_groups(*mpi, pso, co);
  if (!groups.ok()) abort_mpi_job(groups.status());
  auto result = run_ps_job(cfg, pso, groups.value(), *data, world_size, lead_worker);
  if (!result.ok()) abort_mpi_job(result.status());
  if (rank == 0) {
    std::fputs(format_ps_report(result->reports, result->summary).c_str(), stdout);
    if (!std::isnan(result->summary.val_loss)) std::printf("final validation loss: %.4f\n", result->summary.val_loss);
    std::printf("summary (JSON): %s\n", ps_summary_json(result->summary).c_str());
    std::fflush(stdout);
  }
  if (!lead_worker) return kExitOk;
  if (Status s = save_and_sample(cfg, *in.tok, &result->final_params); !s.ok()) return report_error(s, kExitFailure);
  return kExitOk;
}

}  // namespace zt
