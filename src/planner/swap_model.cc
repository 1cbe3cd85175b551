// The optimizer pass's time; see swap_model.h.
#include "planner/swap_model.h"

#include <algorithm>


namespace zt {

double swap_pass_seconds(const SwapPass& p, double update_s, const DiskCalibration& d) {
  const double C = static_cast<double>(std::max<size_t>(1, p.chunks));
  const double moved = (p.read_bytes + p.write_bytes) / C;  // a chunk's bytes both ways
  const double disk = moved / d.mixed_bytes_per_s;
  const double thread = update_s / C + moved / d.checksum_bytes_per_s;
  const double first_read = p.read_bytes / C / d.mixed_bytes_per_s;
  const double last_write = p.write_bytes / C / d.write_bytes_per_s;
  return first_read + (C - 1.0) * std::max(thread, disk) + thread + last_write;
}

double swap_disk_seconds(const SwapPass& p, const DiskCalibration& d) {
  return (p.read_bytes + p.write_bytes) / d.mixed_bytes_per_s;
}

StatusOr<double> price_swap_pass(const MemoryEstimate& m, const std::string& dir, double update_s,
                                 const Calibration& cal, double* disk_s) {
  if (m.disk_read_per_step != m.swap_pass_read || m.disk_write_per_step != m.swap_pass_write) {
    return Status::Unimplemented("this layout reads parameters or stashed activations from disk during forward and "
                                 "backward (offload_param or cpu_checkpointing on NVMe); how those reads overlap the "
                                 "kernels is not modelled, so its step time is not predicted (memory is)");
  }
  const DiskCalibration* d = cal.disk(dir);
  if (d == nullptr) {
    return Status::FailedPrecondition("the swap directory " + dir + " (" + disk_key(dir) + ") has no calibration: run "
                                      "`zerotrain calibrate --nvme-path " + dir + "` on this machine");
  }
  const SwapPass pass{static_cast<double>(m.swap_pass_read), static_cast<double>(m.swap_pass_write), m.swap_chunks};
  *disk_s = swap_disk_seconds(pass, *d);
  return swap_pass_seconds(pass, update_s, *d);
}

StatusOr<double> price_swap_pass(const TrainerOptions& o, int zero_size, int zero_rank, int pp_size, int pp_rank,
                                 double update_s, const Calibration& cal, double* disk_s) {
  ZT_ASSIGN_OR_RETURN(const MemoryEstimate m, estimate_rank_memory(o, zero_size, zero_rank, pp_size, pp_rank));
  return price_swap_pass(m, o.zero.offload.optimizer_path, update_s, cal, disk_s);
}

}  // namespace zt
