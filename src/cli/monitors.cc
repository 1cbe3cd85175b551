// TensorBoard and csv_monitor output; see monitors.h.
#include "cli/monitors.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "io/filesystem.h"

namespace zt {

namespace {

std::string monitor_dir(const MonitorConfig& m, const ZtConfig& c, const char* fallback) {
  const std::string base = m.output_path.empty() ? c.training.output_dir + "/" + fallback : m.output_path;
  return base + "/" + m.job_name;
}

double wall_seconds() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

StatusOr<std::unique_ptr<Monitors>> Monitors::open(const ZtConfig& config) {
  auto m = std::make_unique<Monitors>();
  if (config.tensorboard.enabled) {
    ZT_ASSIGN_OR_RETURN(m->tensorboard_, EventWriter::create(monitor_dir(config.tensorboard, config, "tensorboard")));
  }
  if (config.csv_monitor.enabled) {
    m->csv_dir_ = monitor_dir(config.csv_monitor, config, "csv_monitor");
    ZT_RETURN_IF_ERROR(make_dirs(m->csv_dir_));
  }
  return m;
}

std::string Monitors::describe() const {
  std::string d;
  if (tensorboard_) d = "tensorboard: " + tensorboard_->path();
  if (!csv_dir_.empty()) d += std::string(d.empty() ? "" : "; ") + "csv_monitor: " + csv_dir_ + "/";
  return d;
}

Status Monitors::write_csv(const std::string& tag, int64_t x, float v) {
  auto it = csv_.find(tag);
  if (it == csv_.end()) {
    std::string file = tag;
    for (char& ch : file) ch = (ch == '/' || ch == ' ') ? '_' : ch;
    const std::string path = csv_dir_ + "/" + file + ".csv";
    const bool fresh = !file_exists(path);
    it = csv_.emplace(tag, std::ofstream(path, std::ios::app)).first;
    if (!it->second) return Status::IOError("cannot open csv_monitor file " + path + ": " + std::strerror(errno));
    if (fresh) it->second << "step," << tag.substr(tag.rfind('/') + 1) << "\n";
  }
  char line[64];
  std::snprintf(line, sizeof(line), "%lld,%.9g\n", static_cast<long long>(x), static_cast<double>(v));
  it->second << line << std::flush;
  if (!it->second) return Status::IOError("writing csv_monitor file for " + tag + " in " + csv_dir_);
  return Status::OK();
}

Status Monitors::write(const MonitorStep& s) {
  std::vector<std::pair<std::string, float>> v = {
      {"Train/Samples/train_loss", static_cast<float>(s.loss)},
      {"Train/Samples/lr", static_cast<float>(s.lr)},
      {"Train/Samples/grad_norm", static_cast<float>(s.grad_norm)},
      {"Train/Samples/samples_per_sec", static_cast<float>(s.samples_per_s)},
      {"Train/Samples/tokens_per_sec", static_cast<float>(s.tokens_per_s)}};
  if (s.mfu >= 0) v.emplace_back("Train/Samples/mfu", static_cast<float>(s.mfu));
  if (s.loss_scale) v.emplace_back("Train/Samples/loss_scale", static_cast<float>(*s.loss_scale));
  if (s.eval_loss) v.emplace_back("Train/Samples/eval_loss", static_cast<float>(*s.eval_loss));
  if (s.forward_ms) v.emplace_back("Train/Samples/elapsed_time_ms_forward", static_cast<float>(*s.forward_ms));
  if (s.backward_ms) v.emplace_back("Train/Samples/elapsed_time_ms_backward", static_cast<float>(*s.backward_ms));
  if (s.step_ms) v.emplace_back("Train/Samples/elapsed_time_ms_step", static_cast<float>(*s.step_ms));
  for (size_t r = 0; r < s.peak_rss.size(); ++r) {
    v.emplace_back("Train/Samples/peak_rss_mib/rank" + std::to_string(r), static_cast<float>(s.peak_rss[r] / (1 << 20)));
  }
  for (size_t i = 0; i < s.block_param_eigenvalues.size(); ++i) {
    v.emplace_back("Train/Eigenvalues/ModelBlockParam_" + std::to_string(i), static_cast<float>(s.block_param_eigenvalues[i]));
  }
  if (s.moe_aux_loss) {
    v.emplace_back("Train/MoE/aux_loss", static_cast<float>(*s.moe_aux_loss));
    v.emplace_back("Train/MoE/dropped_tokens", static_cast<float>(s.moe_dropped));
    for (size_t e = 0; e < s.moe_expert_tokens.size(); ++e) {
      v.emplace_back("Train/MoE/tokens_per_expert/" + std::to_string(e), static_cast<float>(s.moe_expert_tokens[e]));
    }
  }
  if (tensorboard_) ZT_RETURN_IF_ERROR(tensorboard_->scalars(s.samples, wall_seconds(), v));
  if (!csv_dir_.empty()) {
    for (const auto& [tag, value] : v) ZT_RETURN_IF_ERROR(write_csv(tag, s.samples, value));
  }
  return Status::OK();
}

}  // namespace zt
