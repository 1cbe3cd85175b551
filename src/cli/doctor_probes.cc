// Probes for `zerotrain doctor`: output directory (writable, io_uring, O_DIRECT), memory,
// disk, MPI library and transports, oneDNN's ISA and the GEMM speed. Every probe that
// creates a file removes it before returning, whatever happened in between.
#include "cli/doctor_probes.h"

#include <fcntl.h>
#include <linux/io_uring.h>
#include <mpi.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "core/timer.h"

namespace zt {

namespace {

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `dir` itself when it exists, else the nearest existing ancestor ("." for a relative
// path whose first component is missing, "/" at worst).
std::string nearest_existing_dir(const std::string& dir) {
  std::string d = dir.empty() ? "." : dir;
  while (!is_dir(d)) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    const size_t slash = d.rfind('/');
    if (slash == std::string::npos) return ".";
    d = slash == 0 ? "/" : d.substr(0, slash);
  }
  return d;
}

std::string absolute(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (r == nullptr) return path;
  std::string out(r);
  std::free(r);
  return out;
}

// Creates, writes one byte to and removes a temporary file in `dir`; "" on success.
std::string try_write(const std::string& dir) {
  std::string tmpl = dir + "/.zt_doctor_XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return std::strerror(errno);
  const bool wrote = ::write(fd, "z", 1) == 1;
  const int write_errno = errno;
  ::close(fd);
  ::unlink(tmpl.c_str());
  return wrote ? "" : std::strerror(write_errno);
}

// io_uring_setup with one entry, the ring closed at once; "" when available.
std::string try_io_uring() {
  struct io_uring_params params;
  std::memset(&params, 0, sizeof(params));
  const long fd = ::syscall(__NR_io_uring_setup, 1, &params);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return "";
  }
  switch (errno) {
    case ENOSYS: return "the kernel (Linux < 5.1) or a seccomp filter does not provide io_uring_setup";
    case EPERM: return "disabled by sysctl kernel.io_uring_disabled or a seccomp filter (containers)";
    case ENOMEM: return "RLIMIT_MEMLOCK is too low for a ring (raise ulimit -l)";
    default: return std::strerror(errno);
  }
}

// One 4096-byte block from a 4096-aligned buffer written with O_DIRECT; "" on success.
std::string try_odirect(const std::string& dir) {
  const std::string path = dir + "/.zt_doctor_odirect." + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT, 0600);
  if (fd < 0) {
    return errno == EINVAL ? "the filesystem refuses O_DIRECT (tmpfs, some FUSE and overlay mounts)"
                           : std::string("could not create a test file: ") + std::strerror(errno);
  }
  constexpr size_t kBlock = 4096;
  void* buf = std::aligned_alloc(kBlock, kBlock);
  std::memset(buf, 0, kBlock);
  const ssize_t n = ::write(fd, buf, kBlock);
  const int write_errno = errno;
  std::free(buf);
  ::close(fd);
  ::unlink(path.c_str());
  if (n == static_cast<ssize_t>(kBlock)) return "";
  if (n < 0 && write_errno == EINVAL) return "an aligned 4096-byte O_DIRECT write was refused (EINVAL)";
  return n < 0 ? std::string("O_DIRECT write failed: ") + std::strerror(write_errno) : "short O_DIRECT write";
}

// An executable named `name` in a PATH directory, or "".
std::string find_in_path(const char* name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::string candidate = (d.empty() ? "." : d) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

IoProbe probe_io(const std::string& dir) {
  IoProbe p;
  p.exists = is_dir(dir);
  p.probed = absolute(nearest_existing_dir(dir));
  p.dir = p.exists ? absolute(dir) : dir;
  p.write_error = try_write(p.probed);
  p.writable = p.write_error.empty();
  p.io_uring_note = try_io_uring();
  p.io_uring = p.io_uring_note.empty();
  if (p.writable) {
    p.odirect_note = try_odirect(p.probed);
    p.odirect = p.odirect_note.empty();
  } else {
    p.odirect_note = "not probed: the directory is not writable";
  }
  return p;
}

MemInfo parse_meminfo(const std::string& text) {
  MemInfo m;
  bool have_total = false, have_available = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemTotal: %llu kB", &kib) == 1) {
      m.total = kib * 1024;
      have_total = true;
    } else if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) {
      m.available = kib * 1024;
      have_available = true;
    }
  }
  m.known = have_total && have_available;
  return m;
}

MemInfo read_meminfo() {
  std::ifstream f("/proc/meminfo");
  if (!f) return {};
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_meminfo(ss.str());
}

DiskInfo disk_space(const std::string& dir) {
  DiskInfo d;
  struct statvfs s;
  if (::statvfs(dir.c_str(), &s) != 0) {
    d.error = std::strerror(errno);
    return d;
  }
  d.known = true;
  d.free = static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
  d.total = static_cast<uint64_t>(s.f_blocks) * s.f_frsize;
  return d;
}

std::string mpi_library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS) return "unknown (MPI_Get_library_version failed)";
  std::string v(buf, static_cast<size_t>(std::clamp(len, 0, MPI_MAX_LIBRARY_VERSION_STRING)));
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\0' || v.back() == '\r')) v.pop_back();
  return v;
}

std::string mpi_transports() {
  const std::string ompi_info = find_in_path("ompi_info");
  if (ompi_info.empty()) return "ompi_info not found";
  FILE* pipe = ::popen(("'" + ompi_info + "' --parsable 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::string("could not run ompi_info: ") + std::strerror(errno);
  std::map<std::string, std::set<std::string>> components;  // framework -> names
  char* line = nullptr;
  size_t cap = 0;
  while (::getline(&line, &cap, pipe) > 0) {
    char framework[32], name[64];
    int matched_to = -1;  // set only when the whole "mca:<framework>:<name>:version:" matched
    std::sscanf(line, "mca:%31[^:]:%63[^:]:version:%n", framework, name, &matched_to);
    if (matched_to < 0) continue;
    if (std::strcmp(framework, "btl") == 0 || std::strcmp(framework, "pml") == 0) components[framework].insert(name);
  }
  std::free(line);
  const int status = ::pclose(pipe);
  if (components.empty()) return "ompi_info listed no btl or pml components (exit status " + std::to_string(status) + ")";
  std::string out;
  for (const auto& [framework, names] : components) {
    out += (out.empty() ? "" : "; ") + framework + ":";
    const char* sep = " ";
    for (const std::string& n : names) {
      out += sep + n;
      sep = ", ";
    }
  }
  return out;
}

}  // namespace zt
