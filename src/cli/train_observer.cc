// The per-step output of `zerotrain train`; see train_observer.h.
#include "cli/train_observer.h"

#include <algorithm>
#include <cstdio>

#include "cli/flops_profiler.h"

namespace zt {

void TrainObserver::print_lines(const StepEvent& e, const MetricsRow& row) {
  const StepStats& st = *e.stats;
  char line[300];
  if (st.skipped) {
    std::snprintf(line, sizeof(line),
                  "step %lld: fp16 gradient overflow (inf/NaN on some rank): step skipped on every rank, loss scale "
                  "%g -> %g", static_cast<long long>(st.step), st.loss_scale, st.next_loss_scale);
    v_.progress->message(line);
  }
  if (v_.cfg->wall_clock_breakdown && st.step % v_.print_every == 0) {
    std::snprintf(line, sizeof(line),
                  "step %lld time (ms) | forward: %.2f | backward: %.2f | backward_allreduce (wait): %.2f | "
                  "optimizer_step: %.2f | pipeline bubble: %.2f | exposed communication: %.2f",
                  static_cast<long long>(st.step), row.forward_ms, row.backward_ms,
                  1e3 * v_.trainer->layer_times().reduce_wait_s, row.optimizer_ms, 1e3 * st.pipeline_wait_s,
                  1e3 * e.exposed_comm_s);
    v_.progress->message(line);
  }
  if (e.val_loss) {
    std::snprintf(line, sizeof(line), "step %lld: val loss %.4f", static_cast<long long>(st.step), *e.val_loss);
    v_.progress->message(line);
  }
}

namespace {

// The MoE columns: the balance loss, dropped slots, and rank 0's load imbalance (the most
// token slots routed to one expert over the mean; 1 is perfectly even).
void moe_columns(const StepStats& st, MetricsRow* row) {
  row->moe_aux_loss = st.moe_aux_loss;
  row->moe_dropped = st.moe_dropped;
  int64_t sum = 0, top = 0;
  for (int64_t n : st.moe_expert_tokens) {
    sum += n;
    top = std::max(top, n);
  }
  const double mean = st.moe_expert_tokens.empty() ? 0.0 : static_cast<double>(sum) / st.moe_expert_tokens.size();
  row->moe_imbalance = mean > 0 ? static_cast<double>(top) / mean : 0.0;
}

}  // namespace

Status TrainObserver::on_step(const StepEvent& e) {
  const ZtConfig& cfg = *v_.cfg;
  const StepStats& st = *e.stats;
  const double tok_s = static_cast<double>(st.tokens) * cfg.parallel.dp / e.seconds;  // the whole job's throughput
  MetricsRow row{st.step, st.loss, e.val_loss, st.lr, st.grad_norm, tok_s,
                 1e3 * st.forward_s, 1e3 * st.backward_s, 1e3 * st.optimizer_s};
  moe_columns(st, &row);
  const double mfu = v_.peak > 0 ? cfg.model.flops_per_token(cfg.data.seq_len) * tok_s / v_.peak : -1.0;
  const double elapsed = run_clock_.seconds() * static_cast<double>(st.step) / static_cast<double>(st.step - e.first_step);
  if (v_.lead) {
    const bool moe = cfg.model.moe.enabled();
    v_.progress->update({st.step, st.loss, st.lr, st.grad_norm, tok_s, mfu, moe ? st.moe_aux_loss : -1.0, st.moe_dropped},
                        elapsed);
    print_lines(e, row);
  }
  if (v_.csv != nullptr) v_.csv->write(row);
  if (v_.lead) {
    const StepMeasure sm{st.step, e.seconds, st.optimizer_s, v_.peak / v_.world_size, v_.world_size, cfg.parallel.dp};
    ZT_RETURN_IF_ERROR(log_profilers(cfg, *v_.trainer, *v_.groups, sm, v_.print_every));
  }
  if (v_.monitors == nullptr) return Status::OK();
  const int64_t batch = cfg.batch.train_batch_size;
  MonitorStep m{st.step, st.step * batch, st.loss, st.lr, st.grad_norm, tok_s / cfg.data.seq_len, tok_s, mfu,
                std::nullopt, e.val_loss, e.peak_rss};
  if (v_.trainer->loss_scaler() != nullptr) m.loss_scale = st.loss_scale;
  if (cfg.wall_clock_breakdown) {
    m.forward_ms = row.forward_ms;
    m.backward_ms = row.backward_ms;
    m.step_ms = row.optimizer_ms;
  }
  m.block_param_eigenvalues = e.block_param_eigenvalues;
  if (cfg.model.moe.enabled()) {
    m.moe_aux_loss = st.moe_aux_loss;
    m.moe_dropped = st.moe_dropped;
    m.moe_expert_tokens = st.moe_expert_tokens;
  }
  return v_.monitors->write(m);
}

}  // namespace zt
