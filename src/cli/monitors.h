// DeepSpeed's monitors, written by rank 0: "tensorboard" (TensorBoard event files,
// io/tfevents.h) and "csv_monitor" (one CSV per tag, as DeepSpeed's csv_monitor.py:
// <dir>/<tag with '/' and ' ' -> '_'>.csv with the header "step,<last tag segment>").
// Both go to <output_path>/<job_name>, output_path defaulting to
// <training.output_dir>/tensorboard or /csv_monitor. As in DeepSpeed the x-axis is the
// global sample count (step x train_batch_size). Tags:
//   Train/Samples/train_loss, lr, grad_norm, samples_per_sec, tokens_per_sec,
//   mfu (when the FMA peak is known), loss_scale (fp16), eval_loss (when evaluated),
//   peak_rss_mib/rank<r> (every rank's peak RSS so far); with wall_clock_breakdown,
//   elapsed_time_ms_forward, _backward and _step (the optimizer step), as DeepSpeed; with
//   eigenvalue, Train/Eigenvalues/ModelBlockParam_<i> on the steps that estimate it.
// Values are stored as float32 (TensorBoard's simple_value), so a tag equals
// metrics.csv's column rounded to float.
// Thread-safety: the training thread of rank 0.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "config/config.h"
#include "core/status.h"
#include "io/tfevents.h"

namespace zt {

struct MonitorStep {
  int64_t step = 0;
  int64_t samples = 0;  // global samples seen after this step: the x-axis
  double loss = 0.0, lr = 0.0, grad_norm = 0.0, samples_per_s = 0.0, tokens_per_s = 0.0;
  double mfu = -1.0;                  // < 0: unknown
  std::optional<double> loss_scale;   // fp16
  std::optional<double> eval_loss;
  std::vector<double> peak_rss;       // bytes, per world rank
  // wall_clock_breakdown: DeepSpeed's elapsed_time_ms_{forward, backward, step} tags.
  std::optional<double> forward_ms, backward_ms, step_ms;
  // eigenvalue: DeepSpeed's Train/Eigenvalues/ModelBlockParam_<i> (engine/hessian_probe.h).
  std::vector<double> block_param_eigenvalues;
  // MoE: Train/MoE/aux_loss, dropped_tokens and tokens_per_expert/<e> (rank 0's routing).
  std::optional<double> moe_aux_loss;
  int64_t moe_dropped = 0;
  std::vector<int64_t> moe_expert_tokens;
};

class Monitors {
 public:
  // Nothing is opened for monitors that are not enabled.
  static StatusOr<std::unique_ptr<Monitors>> open(const ZtConfig& config);
  static bool any_enabled(const ZtConfig& config) { return config.tensorboard.enabled || config.csv_monitor.enabled; }
  Status write(const MonitorStep& s);
  // "tensorboard: <file>; csv_monitor: <dir>" for the banner.
  std::string describe() const;

 private:
  Status write_csv(const std::string& tag, int64_t x, float v);
  std::unique_ptr<EventWriter> tensorboard_;
  std::string csv_dir_;
  std::map<std::string, std::ofstream> csv_;
};

}  // namespace zt
