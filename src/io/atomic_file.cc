// write-fsync-rename-fsync(dir), with errno text in every error.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace zt {

namespace {

Status posix_error(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::atomic<long long> g_torn_write_budget{-1};

Status write_all(int fd, const void* data, size_t size, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const long long budget = g_torn_write_budget.load();
    size_t chunk = size;
    if (budget >= 0 && static_cast<long long>(chunk) > budget) chunk = static_cast<size_t>(budget);
    if (budget >= 0 && chunk == 0) {
      ::fsync(fd);  // what was written is on disk, as after a crash
      ::raise(SIGKILL);
    }
    const ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return posix_error("cannot write", path);
    }
    p += n;
    size -= static_cast<size_t>(n);
    if (budget >= 0) g_torn_write_budget.fetch_sub(n);
  }
  return Status::OK();
}

}  // namespace

void arm_torn_write_hook(long long bytes) { g_torn_write_budget.store(bytes); }

Status write_file_atomic(const std::string& path, const ByteSpan* pieces, size_t count, const ProgressFn& progress) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return posix_error("cannot create", tmp);
  Status s;
  uint64_t total = 0, done = 0;
  for (size_t i = 0; i < count; ++i) total += pieces[i].size;
  for (size_t i = 0; i < count && s.ok(); ++i) {
    s = write_all(fd, pieces[i].data, pieces[i].size, tmp);
    done += pieces[i].size;
    if (progress) progress(done, total);
  }
  if (s.ok() && ::fsync(fd) != 0) s = posix_error("cannot fsync", tmp);
  if (::close(fd) != 0 && s.ok()) s = posix_error("cannot close", tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = posix_error("cannot rename onto", path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const std::string dir = parent_dir(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return posix_error("cannot open directory", dir);
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return posix_error("cannot fsync directory", dir);
  return Status::OK();
}

Status write_file_atomic(const std::string& path, std::string_view contents) {
  const ByteSpan piece{contents.data(), contents.size()};
  return write_file_atomic(path, &piece, 1);
}

StatusOr<std::string> read_file(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no such file: " + path);
    return posix_error("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return posix_error("cannot stat", path);
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::Corruption(path + ": " + std::to_string(st.st_size) + " bytes, over the " + std::to_string(max_bytes) +
                              "-byte limit for this kind of file");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return posix_error("cannot read", path);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return out;
}

}  // namespace zt
