// `zerotrain calibrate`: measures what the planner's model prices (planner/perf_model.h)
// on this machine and merges it into the calibration cache (planner/calibration.h):
//   - every kernel call of the given models' micro-batches (--config, repeatable; none:
//     GPT-2 small at 1024 tokens) for the micro-batch sizes and tensor-parallel degrees
//     asked, and AdamW updates of 1M..64M elements, with this process's threads (with
//     --device cuda, GPU 0's kernels, each call to the end of its stream); under
//     mpirun every rank runs the same calls at the same time (as ranks do in training)
//     and rank 0's times are kept;
//   - under mpirun with 2 or more ranks, α and β of all_reduce, reduce_scatter,
//     all_gather and p2p over the world group, stored as the "intra" link when every
//     rank is on one host and "inter" otherwise;
//   - the resident memory of a rank before any model (binary, MPI, BLAS buffers);
//   - each swap directory of --nvme-path and of the configs' NVMe offload: its write and
//     read-while-write rates through the swapper's I/O engine and the swap checksums' rate
//     (planner/disk_probe.h), on the first rank only;
//   - with --splits, the kernels at every split of this host's cores into ranks x threads
//     (planner/host_split.h), each through `launch` with its ranks bound to their own
//     cores and timing at once, so `plan` prices every split it searches from a table
//     measured at that split.
// Exit status: 0 written, 2 bad arguments or configuration, 1 a measurement failed.
#pragma once

#include "cli/command.h"

#include <string>
#include <vector>

namespace zt {

struct CalibrateArgs {
  std::vector<std::string> configs;  // ds_config.json files whose shapes (and swap directories) to measure
  std::vector<std::string> nvme_paths;  // swap directories to measure (planner/disk_probe.h)
  std::string nvme_bytes;               // bytes of each probe file ("" = the probe's default)
  std::vector<int> micro_batches = {1, 2, 4, 8};
  std::vector<int> tp_degrees = {1, 2, 4, 8};
  std::string precision = "fp32";   // fp32, bf16, fp16: the compute table to fill
  std::string device = "cpu";       // cpu, cuda: whose kernels it times
  std::string output;               // "" = default_calibration_path()
  bool skip_compute = false;
  bool skip_comm = false;
  bool quick = false;               // shorter timings and messages up to 4 MiB (tests)
  bool splits = false;              // every split of this host's cores, one mpirun run each
};

int run_calibrate(const CalibrateArgs& args);

// Registers `zerotrain calibrate` and its flags.
Command add_calibrate_command(CLI::App& app);

}  // namespace zt
