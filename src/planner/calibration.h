// The calibration cache `zerotrain calibrate` writes and `estimate`/`plan` read: what this
// machine measured, as a JSON file (default $ZT_CALIBRATION, else
// $XDG_CACHE_HOME/zerotrain/calibration.json, else ~/.cache/zerotrain/calibration.json):
//   {"format": "zerotrain-calibration/1", "machine": {"cpu", "isa", "gemm", "cores"},
//    "process_base_bytes", "mpi_process_base_bytes", "mpi_inter_process_base_bytes":
//    resident memory of a process before its model (binary, BLAS; and MPI for a rank under
//    mpirun, with peers on its host or on other hosts: the transports' buffers differ),
//    "compute": [{"threads", "concurrent_ranks", "dtype", "device" (optional, "cpu"), "seconds": {op key: s},
//                 "slowest_seconds" (optional): {op key: s},
//                 "workspace_bytes" (optional): {op key: bytes}}],
//    "links": {"intra"|"inter": {collective: {"alpha_s", "beta_s_per_byte", "ranks",
//                                             "max_rel_residual", "points": [[bytes, s], ...],
//                                             "validation_points": [[bytes, s], ...]}}},
//    "device_link" (optional): {"device", "h2d_bytes_per_s", "d2h_bytes_per_s"},
//    "disks" (optional): {swap directory: {"write_bytes_per_s", "mixed_bytes_per_s",
//                                          "checksum_bytes_per_s", "direct", "io",
//                                          "probe_bytes_per_array", "probe_chunks"}}}
// A compute table holds the median time of each kernel call it measured (op_list.h keys),
// taken with `threads` threads per rank while `concurrent_ranks` ranks ran the same calls
// on this machine. "intra" is a group within one host (shared memory), "inter" one that
// crosses hosts (TCP).
// Pricing a call: its measured time when the table has its shape; otherwise the time of
// the same kernel's measured shape nearest in work (log scale), scaled by the work ratio,
// and the call counts as extrapolated.
// Thread-safety: values; const methods may be called concurrently.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/json_strict.h"
#include "planner/comm_model.h"
#include "planner/op_list.h"
#include "tensor/dtype.h"

namespace zt {

struct ComputeTable {
  int threads = 1;
  int concurrent_ranks = 1;
  std::string dtype = "fp32";  // "fp32", "bf16", "fp16"
  std::string device = "cpu";  // whose kernels: "cpu", or "cuda" (calibrate --device cuda: the GPU's, on its stream)
  std::map<std::string, double> seconds;  // a call's typical time on one rank
  // Under mpirun: the slowest rank's time of the same call, all ranks starting together (the
  // median over passes of the maximum over ranks). A group that synchronises between kernels
  // (tensor parallelism's all-reduces) waits for it at every sync. Empty: not measured.
  std::map<std::string, double> slowest_seconds;
  // The resident memory a call needs only while it runs (a GEMM library's packed operands:
  // op_timer.h measure_op), per call on one rank; calls that needed none are left out.
  std::map<std::string, double> workspace_bytes;

  // Seconds for one call (the slowest rank's when `slowest_rank` and measured); *exact false
  // when extrapolated from another shape. False when the table has no call of that kernel.
  bool price(const OpCall& op, double* seconds_out, bool* exact, bool slowest_rank = false) const;
  // A call's workspace bytes: as measured at its shape, else the same kernel's nearest
  // measured shape by work, else 0.
  double workspace(const OpCall& op) const;
};

// A GPU machine's pinned host<->device copy rates, measured by calibrate where a CUDA
// device is usable (backend/cuda/cuda_device.h measure_cuda_device): they price offload's
// PCIe traffic. Empty `device`: not measured.
struct DeviceLinkCalibration {
  std::string device;  // "NVIDIA H200"
  double h2d_bytes_per_s = 0.0, d2h_bytes_per_s = 0.0;
};

// A swap directory's rates, measured by calibrate (planner/disk_probe.h) through the
// swapper itself: its files' first write, and the rate at which reads and writes together
// pass as the optimizer pass moves them (bytes read plus written per second); and the swap
// checksums' rate on this machine's threads. They price NVMe offload's optimizer pass
// (planner/swap_model.h). Keyed by the directory's canonical path; the probe's geometry
// is kept with them.
struct DiskCalibration {
  double write_bytes_per_s = 0.0, mixed_bytes_per_s = 0.0, checksum_bytes_per_s = 0.0;
  bool direct = true;  // O_DIRECT (false: the file system refused it; the page cache was in the way)
  std::string io;      // the engine's mode: "io_uring" or its fallback
  double probe_bytes_per_array = 0.0;  // the probe's two arrays
  size_t probe_chunks = 0;             // in this many chunks
};

// The key of a swap directory in Calibration::disks: its canonical absolute path (a path
// relative to the working directory resolved, as the run resolves it).
std::string disk_key(const std::string& dir);

struct Calibration {
  std::string cpu, isa, gemm;
  int cores = 0;
  double process_base_bytes = 0.0;      // a single process (no MPI)
  double mpi_process_base_bytes = 0.0;        // a rank under mpirun, peers on its host; 0: not measured
  double mpi_inter_process_base_bytes = 0.0;  // a rank under mpirun, peers on other hosts; 0: not measured
  // The base for a run of `world` ranks on `hosts` hosts: the figure measured for that
  // transport, else the nearest one measured.
  double base_bytes(int world, int hosts = 1) const {
    if (world <= 1) return process_base_bytes;
    if (hosts > 1 && mpi_inter_process_base_bytes > 0) return mpi_inter_process_base_bytes;
    if (mpi_process_base_bytes > 0) return mpi_process_base_bytes;
    return mpi_inter_process_base_bytes > 0 ? mpi_inter_process_base_bytes : process_base_bytes;
  }
  std::vector<ComputeTable> compute;
  std::map<std::string, std::map<std::string, CollectiveFit>> links;  // link -> collective -> fit
  DeviceLinkCalibration device_link;
  std::map<std::string, DiskCalibration> disks;  // disk_key(dir) -> its rates

  // The rates of swap directory `dir`, or null when it was not measured.
  const DiskCalibration* disk(const std::string& dir) const;

  // The table of `device`'s kernels for `dtype` measured nearest `threads` threads per rank (ties: more threads),
  // and among those the one whose concurrent ranks are nearest `ranks_on_host` (ties: more
  // ranks: a busier machine), or null when there is none for the dtype.
  const ComputeTable* table(int threads, int ranks_on_host, const std::string& dtype,
                            const std::string& device = "cpu") const;
  // Replaces the table with the same threads, concurrent ranks and dtype, or adds it.
  void put(const ComputeTable& t);
  // The fit for `link` ("intra"/"inter") and collective, or null.
  const CollectiveFit* fit(const std::string& link, Collective c) const;
};

// The compute table's name of a compute dtype: "fp32", "bf16" or "fp16".
const char* table_dtype(DType d);

std::string default_calibration_path();
Json calibration_to_json(const Calibration& c);
// Errors name `file` and the JSON pointer of what is wrong.
StatusOr<Calibration> calibration_from_json(const Json& j, const std::string& file);
StatusOr<Calibration> load_calibration(const std::string& path);
// Written atomically; creates the directory.
Status save_calibration(const std::string& path, const Calibration& c);

}  // namespace zt
