// Trainer <-> sharded checkpoints; see trainer_checkpoint.h.
#include "engine/trainer_checkpoint.h"

#include "checkpoint/rank_state.h"
#include "checkpoint/reshard.h"
#include "checkpoint/sharded_save.h"
#include "core/cpu_features.h"
#include "core/version.h"
#include "core/threads.h"

namespace zt {

namespace {

const char* schedule_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::kConstant: return "";
    case ScheduleKind::kWarmupLR: return "WarmupLR";
    case ScheduleKind::kWarmupDecayLR: return "WarmupDecayLR";
    case ScheduleKind::kWarmupCosineLR: return "WarmupCosineLR";
    case ScheduleKind::kOneCycle: return "OneCycle";
  }
  return "";
}

// The manifest's optimizer type: a checkpoint of one optimizer is refused by another.
// The 1-bit kinds save their moments, and their error feedback and schedules as rank
// state, restored into the same layout (checkpoint/rank_state.h).
const char* optimizer_name(OptimizerKind k) {
  switch (k) {  // every kind: a new one must be named here
    case OptimizerKind::kAdamW: return "adamw";
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kLamb: return "lamb";
    case OptimizerKind::kOneBitAdam: return "onebitadam";
    case OptimizerKind::kZeroOneAdam: return "zerooneadam";
    case OptimizerKind::kOneBitLamb: return "onebitlamb";
  }
  return "unknown";
}

// Every rank must succeed, or none trains: returns `local`, or an error naming how many
// other ranks failed.
Status all_ranks_ok(Trainer& t, const Status& local, const std::string& what) {
  int64_t failed = local.ok() ? 0 : 1;
  if (t.world().size() > 1) {
    t.world().set_phase("checkpoint load");
    Status agree = t.world().all_reduce(&failed, 1, CommDType::kI64)->wait();
    t.world().set_phase(nullptr);
    ZT_RETURN_IF_ERROR(agree);
  }
  if (!local.ok()) return local;
  if (failed > 0) return Status::Corruption(what + " failed on " + std::to_string(failed) + " other rank(s)");
  return Status::OK();
}

}  // namespace

// On a backend whose memory the host cannot read (a GPU), the view's arrays are host
// mirrors: copied out here, copied back by close_checkpoint_view(written = true); arrays
// already in host memory (offload_optimizer "cpu") are used in place.
StatusOr<RankStateView> Trainer::checkpoint_view() {
  RankStateView v;
  v.table = &model_->param_table();
  const ElementRange shard = partition_.shard(zero_->rank());
  ZT_ASSIGN_OR_RETURN(const std::vector<OwnedArray> arrays, states_->open_arrays());
  mirrors_.clear();
  for (const OwnedArray& a : arrays) {
    float* data = a.data;
    if (!backend_.host() && !a.host) {
      mirrors_.push_back({a.data, std::vector<float>(a.range.size())});
      backend_.copy_to_host(mirrors_.back().host.data(), a.data, a.range.size() * sizeof(float));
      data = mirrors_.back().host.data();
    }
    v.arrays.push_back({a.name, data, a.range});
  }
  v.rank_arrays = optimizer_->rank_state();
  v.save_range = shard;
  if (expert_parallel() && zero_ == dp_) {  // stage 0: experts split among the ranks holding them
    v.expert_save_range = Partition(v.table->numel(), edp_->size()).shard(edp_->rank());
  } else if (expert_parallel()) {  // stages 1+: the ep group holds the same dense shard: each writes a part
    v.expert_save_range = shard;
    const ElementRange part = Partition(shard.size(), ep_->size()).shard(ep_->rank());
    v.save_range = {shard.begin + part.begin, shard.begin + part.end};
  }
  v.save_tp_replicated = options_.layout.tp_rank == 0;
  if (options_.layout.has_tied_copy()) v.skip_layer = tied_head_layer(options_.model);
  return v;
}

Status Trainer::close_checkpoint_view(bool written) {
  if (written) {
    for (const HostMirror& m : mirrors_) backend_.copy_from_host(m.device, m.host.data(), m.host.size() * sizeof(float));
  }
  mirrors_.clear();
  return states_->close_arrays(written);
}

Status Trainer::finish_load(int64_t global_step, int64_t optimizer_steps) {
  global_step_ = global_step;
  optimizer_->set_step_count(optimizer_steps);
  return states_->finish_load();
}

Status load_trainer_weights(Trainer& t, Status local, const ParamTable& whole, const float* whole_params) {
  StatusOr<RankStateView> opened = local.ok() ? t.checkpoint_view() : StatusOr<RankStateView>(local);
  if (!opened.ok()) local = opened.status();
  if (local.ok()) {
    const RankStateView& view = opened.value();
    const StateArray& p = view.arrays[0];
    const ParamTable& table = *view.table;
    for (const TensorSpec& s : table.specs()) {
      const size_t lo = std::max(s.offset, p.held.begin), hi = std::min(s.offset + s.numel, p.held.end);
      const int w = whole.find(s.name);
      if (lo >= hi) continue;
      if (w < 0) {
        local = Status::InvalidArgument("the weights have no tensor " + s.name);
        break;
      }
      const TensorSpec& ws = whole.at(w);
      ManifestTensor saved;
      saved.name = ws.name;
      saved.shape = ws.shape;
      saved.logical_rows = ws.init_rows >= 0 && ws.init_rows < ws.shape[0] ? ws.init_rows : -1;
      if (!(local = check_reshardable(s, saved, "the weights")).ok()) break;
      read_slice(s, table.tp_rank(), table.tp_size(), saved, whole_params + ws.offset, lo - s.offset, hi - s.offset,
                 p.data + (lo - p.held.begin));
    }
  }
  if (opened.ok()) {
    const Status closed = t.close_checkpoint_view(/*written=*/true);
    if (local.ok()) local = closed;
  }
  ZT_RETURN_IF_ERROR(all_ranks_ok(t, local, "loading weights"));
  return t.finish_load(0, 0);
}

CheckpointLayout current_layout(Trainer& t) {
  const TrainerOptions& o = t.options();
  return {t.world().size(), t.dp().size(), t.pp_size(), o.layout.tp_size, static_cast<int>(o.zero.stage), o.layout.ep_size};
}

int64_t train_batch_size(Trainer& t) {
  return static_cast<int64_t>(t.options().micro_batch) * std::max(1, t.options().micro_batches) * t.data_size();
}

Status save_trainer(Trainer& t, const TrainerSave& save) {
  const TrainerOptions& o = t.options();
  SaveRequest req;
  req.save_dir = save.save_dir;
  req.tag = save.tag.empty() ? step_tag(t.global_step()) : save.tag;
  req.keep_last = save.keep_last;
  req.progress = save.progress;
  Manifest& m = req.meta;
  m.zerotrain_version = kZerotrainVersion;
  m.model = o.model;
  m.layout = current_layout(t);
  EngineState& e = m.engine;
  e.global_step = t.global_step();
  e.optimizer = optimizer_name(o.optimizer);
  e.optimizer_steps = t.optimizer().step_count();
  e.lr_schedule = schedule_name(o.schedule.kind);
  e.next_lr = t.next_lr();
  e.train_batch_size = train_batch_size(t);
  e.seed = o.seed;
  e.isa = isa_name(active_isa());
  e.threads_per_rank = num_threads();
  e.precision = precision_name(t.backend().compute_dtype());
  e.schedules = t.schedules_state();
  if (const LossScaler* s = t.loss_scaler()) {
    e.loss_scaler = s->dynamic() ? "dynamic" : "static";
    e.scaler = s->state();
  }
  m.config = save.config.is_object() ? save.config : Json::object();
  ZT_ASSIGN_OR_RETURN(const RankStateView view, t.checkpoint_view());
  for (const StateArray& a : view.arrays) m.kinds.push_back(a.kind);
  const Status saved = save_checkpoint(&t.world(), view, req);
  const Status closed = t.close_checkpoint_view(/*written=*/false);
  return saved.ok() ? closed : saved;
}

StatusOr<EngineState> load_trainer(Trainer& t, const CheckpointRef& ckpt, bool weights_only, const ProgressFn& progress) {
  const EngineState& e = ckpt.manifest.engine;
  ZT_ASSIGN_OR_RETURN(const RankStateView view, t.checkpoint_view());
  std::vector<std::string> kinds;
  for (const StateArray& a : view.arrays) {
    if (!weights_only || a.kind == "param") kinds.push_back(a.kind);
  }
  Status s = check_same_model(ckpt, t.options().model);
  const std::string mine = optimizer_name(t.options().optimizer);
  if (s.ok() && !weights_only && e.optimizer != mine) {
    s = Status::InvalidArgument("checkpoint " + ckpt.dir + " holds " +
                                (e.optimizer.empty() ? std::string("weights only") : e.optimizer + " state") +
                                " but this run uses " + mine + "; start from its weights with --init instead");
  }
  const LossScaler* scaler = t.loss_scaler();
  if (s.ok() && !weights_only && scaler != nullptr && e.loss_scaler == (scaler->dynamic() ? "dynamic" : "static")) {
    t.set_loss_scaler_state(e.scaler);  // fp16 resumes its scale; another precision's or kind's run starts fresh
  }
  if (s.ok()) s = load_state(ckpt, view, kinds, progress);
  if (s.ok() && !weights_only) s = t.restore_schedules(e.schedules, ckpt.dir + "/manifest.json: /engine/schedules");
  const bool rank_state = s.ok() && !weights_only && rank_state_fits(ckpt.manifest, current_layout(t));
  if (rank_state) s = load_rank_state(ckpt, t.world().rank(), view.rank_arrays);
  if (rank_state && s.ok()) t.optimizer().rank_state_loaded();
  const Status closed = t.close_checkpoint_view(/*written=*/s.ok());
  if (s.ok()) s = closed;
  ZT_RETURN_IF_ERROR(all_ranks_ok(t, s, "loading checkpoint " + ckpt.dir));
  ZT_RETURN_IF_ERROR(weights_only ? t.finish_load(0, 0) : t.finish_load(e.global_step, e.optimizer_steps));
  return e;
}

}  // namespace zt
