// run_report.json (run_report_json.h): the gathered per-rank figures, every rank's memory
// estimate, the communication table, FLOPs and peak, the configuration and the machine.
#include "cli/run_report_json.h"

#include "cli/estimate_command.h"
#include "core/cpu_features.h"
#include "core/cpu_info.h"
#include "core/threads.h"
#include "io/atomic_file.h"

namespace zt {

Status write_run_report_json(const ZtConfig& c, int world, const Trainer& t, const Json& ranks,
                             const std::string& comms, double peak_flops) {
  Json j;
  j["format"] = "zerotrain-run-report";
  j["ranks"] = ranks;
  Json est = Json::array();
  if (auto all = estimate_all_ranks(c, world); all.ok()) {
    for (const MemoryEstimate& e : all.value()) {
      est.push_back({{"param_bytes", e.param_bytes}, {"grad_bytes", e.grad_bytes}, {"optimizer_bytes", e.optimizer_bytes},
                     {"activation_bytes", e.activation_bytes}, {"buffer_bytes_max", e.buffer_bytes_max},
                     {"offload_buffer_bytes", e.offload_buffer_bytes}, {"host_bytes", e.host_bytes},
                     {"total_bytes", e.total()}});
    }
  }
  j["estimate"] = est;
  j["communication"] = comms;
  j["flops_per_token"] = c.model.flops_per_token(c.data.seq_len);
  j["peak_flops"] = peak_flops;
  j["config"] = c.source;
  const CpuInfo cpu = cpu_info();
  j["machine"] = {{"cpu", cpu.model_name}, {"vendor", cpu.vendor}, {"logical_cpus", cpu.logical_cpus},
                  {"isa", isa_name(active_isa())}, {"threads_per_rank", num_threads()}, {"ranks", world},
                  {"backend", t.backend().describe()}};
  return write_file_atomic(c.training.output_dir + "/run_report.json", j.dump(1));
}

}  // namespace zt
