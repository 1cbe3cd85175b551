// `zerotrain doctor` (DeepSpeed's ds_report): prints the machine facts that decide
// zerotrain's speed and correctness, one fact per aligned line (cpu, isa, amx, gemm
// path, openblas, onednn, gemm speed, mpi, cuda, threads, io, memory, disk), then the warnings
// and a `problems:` list in which every entry says what to do.
// Exit status: 0 when there is no problem (warnings allowed), 1 when something will slow
// or break training: GEMMs really running on an OpenBLAS core older than the CPU, an
// invalid ZT_GEMM or ZT_ISA, more threads than logical CPUs, an output directory that is
// not writable, or less than 1 GiB of available memory.
// Thread-safety: run from the main thread, before any training.
#pragma once

#include "cli/command.h"

#include <string>

namespace zt {

struct DoctorOptions {
  std::string output_dir = ".";  // where checkpoints and metrics would go (need not exist yet)
  double gemm_seconds = 0.3;     // time for the GEMM speed probe, and again for the FMA peak
};

int doctor_command(const DoctorOptions& options);

// Registers `zerotrain doctor` and its flags.
Command add_doctor_command(CLI::App& app);

}  // namespace zt
