// The step-time model; see perf_model.h.
#include "planner/perf_model.h"

#include <cstdio>

#include <algorithm>
#include <set>

#include "comm/process_group.h"
#include "engine/parallel_setup.h"
#include "nn/gpt_params.h"
#include "parallel/zero/partition.h"
#include "planner/swap_model.h"

namespace zt {

namespace {

// Prices collectives on the links of one run; remembers which links it used.
class CommPricer {
 public:
  CommPricer(const Calibration& cal, int procs_per_host) : cal_(cal), per_host_(procs_per_host) {}

  // `count` operations moving `bytes` in all over `group`.
  StatusOr<double> price(Collective c, const std::vector<int>& group, double bytes, double count = 1.0) {
    if (group.size() < 2 || count <= 0) return 0.0;
    const std::string link = group_link(group, per_host_);
    const CollectiveFit* f = cal_.fit(link, c);
    if (f == nullptr) {
      return Status::FailedPrecondition(std::string("no calibration of ") + collective_name(c) + " on the \"" + link +
                                        "\" link (" + (link == "inter" ? "across hosts" : "within a host") +
                                        "): run `zerotrain calibrate` under mpirun " +
                                        (link == "inter" ? "with ranks on two hosts" : "with 2 ranks on one host"));
    }
    used_.insert(link);
    // Each of the `count` operations moves bytes / count: priced at that size, since a
    // link's rate depends on the message size (comm_model.h).
    const int P = static_cast<int>(group.size());
    const double t = count * collective_seconds(*f, c, bytes / count, P);
    const double e = fit_rel_error_at(*f, c, bytes / count, P);
    if (e >= 0.0) {
      priced_s_ += t;
      error_s_ += e * t;
      if (e * t > worst_s_) {  // the call whose error costs the most time names the fit
        worst_s_ = e * t;
        worst_.bytes = bytes / count;
        worst_.what = link + " " + collective_name(c);
      }
    }
    return t;
  }
  std::vector<std::string> used() const { return {used_.begin(), used_.end()}; }
  // The priced calls' relative errors weighted by their time: a tiny message's large error
  // counts for the little time it takes.
  CommFitError error() const {
    CommFitError e = worst_;
    e.rel_error = priced_s_ > 0.0 ? error_s_ / priced_s_ : -1.0;
    return e;
  }

 private:
  const Calibration& cal_;
  int per_host_;
  std::set<std::string> used_;
  CommFitError worst_;
  double priced_s_ = 0.0, error_s_ = 0.0, worst_s_ = 0.0;
};

struct StageTime {
  double kernels = 0, tp = 0, pp = 0, sp = 0, zero3 = 0;  // per micro-batch
  double after = 0, dp = 0, optimizer = 0;                // once per step
  double per_micro() const { return kernels + tp + pp + sp + zero3; }
};

// `slowest_rank`: each call at the slowest rank's time (calibration.h), for a group that
// synchronises between kernels.
StatusOr<double> price_ops(const ComputeTable& t, const std::vector<OpCall>& ops, StepPrediction* p,
                           bool slowest_rank = false) {
  double s = 0.0;
  for (const OpCall& op : ops) {
    double sec = 0.0;
    bool exact = false;
    if (!t.price(op, &sec, &exact, slowest_rank)) {
      return Status::FailedPrecondition(std::string("the calibration has no ") + op_kind_name(op.kind) + " for " +
                                        t.dtype + ": run `zerotrain calibrate --config` with this model");
    }
    s += sec;
    if (op.kind == OpKind::kAdamW) continue;  // an update's time is linear in its size: not counted
    ++p->ops;
    p->extrapolated_ops += exact ? 0 : 1;
  }
  return s;
}

// Tensor-parallel all-reduces of one micro-batch on a stage (perf_model.h).
int tp_all_reduces(const RunShape& r, const GptLayout& l) {
  int n = 0;
  for (int b : l.blocks(r.options.model)) {
    const bool ckpt = static_cast<size_t>(b) < r.options.checkpoint.size() && r.options.checkpoint[static_cast<size_t>(b)];
    n += ckpt ? 6 : 4;
  }
  return n + (l.embedding ? 1 : 0) + (l.head ? 1 : 0);
}

// Ulysses' all-to-alls of one micro-batch on a stage (perf_model.h); `token_bytes`: B T C of
// the compute dtype.
StatusOr<double> ulysses_seconds(const RunShape& r, const GptLayout& l, const std::vector<int>& group,
                                 double token_bytes, CommPricer* comm) {
  const GptConfig& c = r.options.model;
  const int sp = l.sp_size;
  if (sp == 1) return 0.0;
  const double C = c.n_embd;
  const double qkv = c.kv_heads() % sp == 0 ? (C + 2.0 * c.kv_dim()) / C : 3.0;  // in units of C per token
  double exchanged = 0.0, calls = 0.0;
  for (int b : l.blocks(c)) {
    const bool ckpt = static_cast<size_t>(b) < r.options.checkpoint.size() && r.options.checkpoint[static_cast<size_t>(b)];
    const double passes = ckpt ? 2.0 : 1.0;  // forwards (a recompute repeats it), then the backward's
    exchanged += (passes + 1.0) * (qkv + 1.0);
    calls += (passes + 1.0) * 2.0;
  }
  const double bytes = exchanged * token_bytes * (sp - 1) / sp;  // what leaves the rank
  return comm->price(Collective::kP2p, group, bytes, calls * (sp - 1));
}

// The optimizer update of a rank's `owned` elements; with NVMe offload, its pass over the
// swap directory (swap_model.h) with that update inside.
StatusOr<double> update_seconds(const RunShape& r, const RankGrid& grid, int rank, const GptLayout& l, double owned,
                                const Calibration& cal, const ComputeTable& t, StepPrediction* p) {
  OpCall adam;
  adam.kind = OpKind::kAdamW;
  adam.dims[0] = std::max<int64_t>(1, static_cast<int64_t>(owned));
  ZT_ASSIGN_OR_RETURN(const double update, price_ops(t, {adam}, p));
  const OffloadOptions& f = r.options.zero.offload;
  if (!f.swaps_optimizer()) return update;
  TrainerOptions o = r.options;
  o.layout = l;
  const ZeroGroupPlace z = zero_group_place(grid, rank, o.zero.stage);
  double disk = 0.0;
  ZT_ASSIGN_OR_RETURN(const double pass, price_swap_pass(o, z.size, z.rank, grid.pp(), grid.coord(rank).pp, update, cal, &disk));
  p->swap_disk_s = std::max(p->swap_disk_s, disk);
  p->swap_dir = f.optimizer_path;
  return pass;
}

StatusOr<StageTime> stage_time(const RunShape& r, const RankGrid& grid, int rank, const Calibration& cal,
                               const ComputeTable& t, CommPricer* comm, StepPrediction* p) {
  const TrainerOptions& o = r.options;
  ZT_ASSIGN_OR_RETURN(const GptLayout l, layout_for_rank(o.model, grid, rank, r.partition, r.virtual_stages));
  const int B = o.micro_batch, T = l.local_seq(o.seq_len);  // this rank's tokens (sp)
  const DType compute = backend_or_cpu(o.backend).compute_dtype();
  const double act = static_cast<double>(B) * T * o.model.n_embd, dsize = static_cast<double>(dtype_size(compute));
  StageTime s;
  // A tensor-parallel group all-reduces after every few kernels: each segment between them
  // lasts as long as its slowest rank's kernels.
  const bool synced = grid.tp() > 1;
  ZT_ASSIGN_OR_RETURN(const double fwd, price_ops(t, forward_ops(o.model, l, B, T), p, synced));
  ZT_ASSIGN_OR_RETURN(const double bwd, price_ops(t, backward_ops(o.model, l, B, T, o.checkpoint), p, synced));
  s.kernels = fwd + bwd;
  const std::vector<int> tpg = grid.group_of(rank, GridAxis::kTp), dpg = grid.group_of(rank, GridAxis::kDp);
  ZT_ASSIGN_OR_RETURN(s.tp, comm->price(Collective::kAllReduce, tpg, act * 4.0 * tp_all_reduces(r, l),
                                        tp_all_reduces(r, l)));
  const GridCoord c = grid.coord(rank);
  // Chunk boundaries: each chunk's input and output, but the first virtual stage's input and
  // the last's output (interleaved: v chunks, the ring wrapping between them).
  const int neighbours = grid.pp() == 1 ? 0 : 2 * r.virtual_stages - (c.pp == 0 ? 1 : 0) - (c.pp + 1 == grid.pp() ? 1 : 0);
  if (neighbours > 0) {  // each boundary: the activation forward, its gradient backward
    const int next = c.pp + 1 < grid.pp() ? rank + grid.tp() * grid.dp() : rank - grid.tp() * grid.dp();
    ZT_ASSIGN_OR_RETURN(s.pp, comm->price(Collective::kP2p, {rank, next}, 2.0 * neighbours * act * dsize,
                                          2.0 * neighbours));
  }
  ZT_ASSIGN_OR_RETURN(s.sp, ulysses_seconds(r, l, grid.group_of(rank, GridAxis::kSp), act * dsize, comm));
  const ParamTable table = build_gpt_param_table(o.model, l);
  const double psi = static_cast<double>(table.numel()), layers = static_cast<double>(l.blocks(o.model).size()) + 2;
  const ZeroStage z = o.zero.stage;
  if (shards_parameters(z)) {
    ZT_ASSIGN_OR_RETURN(s.zero3, comm->price(Collective::kAllGather, dpg, 2.0 * psi * dsize, 2.0 * layers));
  }
  const double gsize = static_cast<double>(comm_dtype_size(o.zero.reduce.wire));  // communication_data_type
  if (shards_gradients(z)) {
    ZT_ASSIGN_OR_RETURN(const double rs, comm->price(Collective::kReduceScatter, dpg, psi * gsize));
    s.zero3 += rs;  // every micro-batch (stages 2 and 3)
  } else {
    ZT_ASSIGN_OR_RETURN(s.dp, comm->price(shards_optimizer(z) ? Collective::kReduceScatter : Collective::kAllReduce,
                                          dpg, psi * gsize));
  }
  if (shards_optimizer(z) && !shards_parameters(z)) {
    ZT_ASSIGN_OR_RETURN(const double ag, comm->price(Collective::kAllGather, dpg, psi * dsize));
    s.dp += ag;
  }
  ZT_ASSIGN_OR_RETURN(s.optimizer, update_seconds(r, grid, rank, l, shards_optimizer(z) ? psi / grid.dp() : psi,
                                                   cal, t, p));
  std::vector<int> world(static_cast<size_t>(grid.world_size()));
  for (int i = 0; i < grid.world_size(); ++i) world[static_cast<size_t>(i)] = i;
  ZT_ASSIGN_OR_RETURN(const double scalars, comm->price(Collective::kAllReduce, world, 6 * 8.0, 6));
  s.dp += scalars;
  if (grid.pp() > 1 && o.model.tied_head() && (l.embedding || l.head)) {  // the tied wte copy's gradient
    const double wte = static_cast<double>(o.model.padded_vocab()) * o.model.n_embd / grid.tp();
    const int other = c.pp == 0 ? grid.rank({c.tp, c.dp, grid.pp() - 1}) : grid.rank({c.tp, c.dp, 0});
    ZT_ASSIGN_OR_RETURN(const double tied, comm->price(Collective::kAllReduce, {std::min(rank, other), std::max(rank, other)},
                                                       wte * 4.0));
    s.dp += tied;
  }
  return s;
}

// The compute table that prices a run: its device's and compute dtype's, nearest its
// threads and ranks a host; or why there is none, and a GPU run of several ranks refused.
StatusOr<const ComputeTable*> step_table(const RunShape& r, const ClusterSpec& cluster, const Calibration& cal) {
  const Backend& backend = backend_or_cpu(r.options.backend);
  const bool cuda = backend.device() == Device::kCuda;
  const std::string dtype = table_dtype(backend.compute_dtype());
  const ComputeTable* t = cal.table(cluster.threads_per_rank, cluster.procs_per_host, dtype, device_name(backend.device()));
  if (t == nullptr && cuda) {
    return Status::FailedPrecondition("the calibration has no cuda " + dtype + " compute table: run `zerotrain "
                                      "calibrate --device cuda --precision " + dtype + " --config` on the GPU machine");
  }
  if (t == nullptr) {
    return Status::FailedPrecondition("the calibration has no " + dtype + " compute table: run `zerotrain calibrate` " +
                                      "with this precision");
  }
  if (cuda && cluster.world() > 1) {
    return Status::Unimplemented("the collectives of several GPUs (NCCL) are not calibrated, so the step of a run of " +
                                 std::to_string(cluster.world()) + " ranks on device cuda is not predicted (one GPU's is)");
  }
  return t;
}

}  // namespace

std::string group_link(const std::vector<int>& ranks, int procs_per_host) {
  std::set<int> hosts;
  for (int r : ranks) hosts.insert(r / std::max(1, procs_per_host));
  return hosts.size() > 1 ? "inter" : "intra";
}

StatusOr<StepPrediction> predict_step(const RunShape& r, const ClusterSpec& cluster, const Calibration& cal) {
  ZT_ASSIGN_OR_RETURN(const RankGrid grid, RankGrid::create(cluster.world(), r.tp, r.dp, r.pp, 1, r.sp));
  ZT_ASSIGN_OR_RETURN(const ComputeTable* t, step_table(r, cluster, cal));
  CommPricer comm(cal, cluster.procs_per_host);
  StepPrediction p;
  p.device = t->device;
  p.table_threads = t->threads;
  p.table_ranks = t->concurrent_ranks;
  std::vector<StageTime> stages;
  for (int s = 0; s < grid.pp(); ++s) {  // tp rank 0, dp rank 0 of each stage: the others mirror it
    ZT_ASSIGN_OR_RETURN(StageTime st, stage_time(r, grid, grid.rank({0, 0, s}), cal, *t, &comm, &p));
    stages.push_back(st);
  }
  const double m = std::max(1, r.micro_batches);
  size_t slow = 0;
  double sum = 0.0;
  for (size_t s = 0; s < stages.size(); ++s) {
    sum += stages[s].per_micro();
    if (stages[s].per_micro() > stages[slow].per_micro()) slow = s;
  }
  const StageTime& w = stages[slow];
  // 1F1B fills and drains the pipeline once (every stage's time, plus m - 1 of the slowest);
  // interleaved with v chunks, at a v-th of each stage's time (Megatron's (S - 1)/(v m)).
  const double v = std::max(1, r.virtual_stages);
  const double pipeline = sum / v + (m - 1.0 / v) * w.per_micro();
  double tail = 0.0;  // the slowest stage's work after its last micro-batch
  for (const StageTime& s : stages) tail = std::max(tail, s.dp + s.optimizer);
  p.compute_s = m * w.kernels;
  p.tp_comm_s = m * w.tp;
  p.pp_comm_s = m * w.pp;
  p.sp_comm_s = m * w.sp;
  p.zero3_comm_s = m * w.zero3;
  p.bubble_s = pipeline - m * w.per_micro();
  p.dp_comm_s = w.dp;
  p.optimizer_s = w.optimizer;
  p.step_s = pipeline + tail;
  p.links = comm.used();
  p.comm_fit = comm.error();
  const double comm_s = p.comm_s();
  if (p.comm_fit.rel_error * comm_s > kMaxCommStepError * p.step_s) {
    char b[400];
    std::snprintf(b, sizeof(b), "the communication fits are off by %.0f%% between their measured sizes (time-weighted; "
                  "most from %s near %.0f bytes), and communication is %.0f%% of this layout's step: the step "
                  "could be %.0f%% off, more than %.0f%% "
                  "(measure the link again with zerotrain calibrate under mpirun, on a quiet machine)",
                  100 * p.comm_fit.rel_error, p.comm_fit.what.c_str(), p.comm_fit.bytes, 100 * comm_s / p.step_s,
                  100 * p.comm_fit.rel_error * comm_s / p.step_s, 100 * kMaxCommStepError);
    return Status::FailedPrecondition(b);
  }
  return p;
}

}  // namespace zt
