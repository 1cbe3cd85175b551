// The probes behind `zerotrain doctor` (cli/doctor_command.h): each asks the OS or a
// library one question and returns the answer as plain data, never printing and never
// deciding what is a problem (doctor_command.cc does that). Probes that touch the
// output directory create only hidden files named .zt_doctor_* and remove them.
// Thread-safety: call from the main thread (the GEMM probe runs OpenMP regions and
// ompi_info is run through popen).
#pragma once

#include <cstdint>
#include <string>

namespace zt {

// Output directory: where checkpoints and metrics will be written.
struct IoProbe {
  std::string dir;          // the directory as given, made absolute when it exists
  std::string probed;       // the nearest existing directory at or above `dir`
  bool exists = false;      // `dir` itself exists and is a directory
  bool writable = false;    // a file could be created and written in `probed`
  std::string write_error;  // strerror of the failed create/write when !writable
  bool io_uring = false;    // io_uring_setup(1, ...) succeeded
  std::string io_uring_note;  // why not, when !io_uring
  bool odirect = false;       // a 4096-byte aligned O_DIRECT write succeeded in `probed`
  std::string odirect_note;   // why not, when !odirect
};
IoProbe probe_io(const std::string& dir);

// /proc/meminfo, in bytes; known is false when MemTotal or MemAvailable is missing.
struct MemInfo {
  bool known = false;
  uint64_t total = 0, available = 0;
};
MemInfo parse_meminfo(const std::string& text);  // the file's contents
MemInfo read_meminfo();

// statvfs of a directory, in bytes (free = what an unprivileged user may use).
struct DiskInfo {
  bool known = false;
  uint64_t free = 0, total = 0;
  std::string error;  // strerror when !known
};
DiskInfo disk_space(const std::string& dir);

// The first line of MPI_Get_library_version (callable before MPI_Init).
std::string mpi_library_version();
// "btl: self, tcp, vader; pml: cm, ob1" from `ompi_info --parsable`, or
// "ompi_info not found" when it is not on PATH.
std::string mpi_transports();

}  // namespace zt
