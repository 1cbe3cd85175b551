// metrics.csv: one row per optimizer step (step, loss, val_loss, lr, grad_norm,
// tokens_per_s, forward_ms, backward_ms, optimizer_ms, for a model with experts
// moe_aux_loss, moe_dropped and moe_imbalance, then loss_hex: the loss as a hex float;
// grad_norm at 17 significant digits, which read back exactly,
// for bit-for-bit comparisons). The header is written exactly once: a resumed run
// appends to an existing file after checking its header matches, and first drops the
// rows after the step it resumed from (they belong to the part of the run that was lost).
// Rows are flushed as written, so a killed run keeps what it measured.
// Lines starting with '#' carry what the numbers depend on (the backend: kernel ISA, GEMM
// path and OpenBLAS core), one written when the file is created and one per resume;
// readers skip them (pandas: read_csv(path, comment='#')).
#pragma once

#include <climits>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "core/status.h"

namespace zt {

struct MetricsRow {
  int64_t step = 0;
  double loss = 0.0;
  std::optional<double> val_loss;
  double lr = 0.0;
  double grad_norm = 0.0;
  double tokens_per_s = 0.0;
  double forward_ms = 0.0;
  double backward_ms = 0.0;
  double optimizer_ms = 0.0;
  // A model with experts: the balance loss before its coefficient, the token slots dropped
  // at capacity, and the load imbalance (most tokens routed to one expert / the mean).
  double moe_aux_loss = 0.0;
  int64_t moe_dropped = 0;
  double moe_imbalance = 0.0;
};

class MetricsCsv {
 public:
  // resume_step: with append, rows of later steps are removed first.
  // about: the "# ..." line's text (empty: none); moe: the MoE columns.
  static StatusOr<MetricsCsv> open(const std::string& path, bool append, int64_t resume_step = INT64_MAX,
                                   const std::string& about = "", bool moe = false);
  MetricsCsv(MetricsCsv&& other) noexcept;
  MetricsCsv& operator=(MetricsCsv&& other) noexcept;
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;
  ~MetricsCsv();

  void write(const MetricsRow& row);
  static std::string header(bool moe = false);

 private:
  MetricsCsv() = default;
  FILE* f_ = nullptr;
  bool moe_ = false;
};

}  // namespace zt
