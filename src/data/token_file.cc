// Token file reader (validate the header from pread, then mmap the whole file) and
// atomic writers. Every fault is reported with its own message naming the file; the
// checks run in a fixed order (empty, short header, magic, version, count, size) so the
// first fault a file has is the one reported.
#include "data/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "io/atomic_file.h"

namespace zt {

static_assert(std::endian::native == std::endian::little,
              "token files are little-endian and read in place; a big-endian host needs byte swaps");

namespace {

// Move-only owner of a file descriptor.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Status posix_error(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

// Opens `path` read-only and returns its size through *bytes.
StatusOr<int> open_regular(const std::string& path, size_t* bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no such token file: " + path);
    return posix_error("cannot open token file", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = posix_error("cannot stat token file", path);
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file (a token file was expected)");
  }
  *bytes = static_cast<size_t>(st.st_size);
  return fd;
}

// Reads up to `want` bytes from offset 0; returns how many were read.
StatusOr<size_t> read_prefix(int fd, void* out, size_t want, const std::string& path) {
  size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd, static_cast<char*>(out) + got, want - got, static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return posix_error("cannot read token file", path);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

std::string hex32(int32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", static_cast<uint32_t>(v));
  return buf;
}

// Validates an llm.c header against the file size; on success *ntok is the token count
// and *wide says whether the tokens are uint32 (the Llama 3 variant).
Status check_llmc(const std::string& path, const int32_t* header, size_t file_bytes, size_t* ntok, bool* wide) {
  *wide = header[0] == kLlmcLlama3Magic;
  if (header[0] != kLlmcMagic && !*wide) {
    return Status::Corruption(path + ": bad magic " + hex32(header[0]) +
                              ", expected 20240520 or 20240801 (an llm.c token file); a headerless nanoGPT file "
                              "must be opened as raw uint16");
  }
  if (!*wide && header[1] != kLlmcVersion) {
    return Status::Corruption(path + ": unsupported llm.c version " + std::to_string(header[1]) +
                              "; supported: version 1 (GPT-2, uint16 tokens)");
  }
  if (*wide && header[1] != kLlmcLlama3Version) {
    return Status::Corruption(path + ": unsupported llm.c version " + std::to_string(header[1]) +
                              " for magic 20240801; supported: version 7 (Llama 3, uint32 tokens)");
  }
  const int32_t count = header[2];
  if (count < 0) {
    return Status::Corruption(path + ": negative token count " + std::to_string(count) + " in the header");
  }
  if (count == 0) {
    return Status::Corruption(path + ": header says 0 tokens; an llm.c token file holds at least one token");
  }
  const size_t width = *wide ? sizeof(uint32_t) : sizeof(uint16_t);
  const size_t payload = file_bytes - kLlmcHeaderBytes;
  const size_t expected = static_cast<size_t>(count) * width;
  if (payload < expected) {
    return Status::Corruption(path + ": truncated: header says " + std::to_string(count) + " tokens, file holds " +
                              std::to_string(payload / width) + " (" + std::to_string(payload) +
                              " bytes after the 1024-byte header, expected " + std::to_string(expected) + ")");
  }
  if (payload > expected) {
    return Status::Corruption(path + ": trailing bytes: header says " + std::to_string(count) + " tokens (" +
                              std::to_string(expected) + " bytes after the 1024-byte header), file has " +
                              std::to_string(payload - expected) + " bytes more");
  }
  *ntok = static_cast<size_t>(count);
  return Status::OK();
}

// The llm.c header for n tokens of either width.
std::array<int32_t, kLlmcHeaderInts> llmc_header(size_t n, bool wide) {
  std::array<int32_t, kLlmcHeaderInts> header{};
  header[0] = wide ? kLlmcLlama3Magic : kLlmcMagic;
  header[1] = wide ? kLlmcLlama3Version : kLlmcVersion;
  header[2] = static_cast<int32_t>(n);
  return header;
}

Status check_writable(const std::string& path, const void* tokens, size_t n, const char* format) {
  if (n == 0) {
    return Status::InvalidArgument(path + ": refusing to write an empty " + std::string(format) +
                                   " token file (0 tokens); token file readers refuse empty files");
  }
  if (tokens == nullptr) return Status::InvalidArgument(path + ": null token buffer for " + std::to_string(n) + " tokens");
  return Status::OK();
}

Status write_llmc(const std::string& path, const void* tokens, size_t n, bool wide) {
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::InvalidArgument(path + ": " + std::to_string(n) +
                                   " tokens do not fit the llm.c header's int32 count; split them into shards");
  }
  const std::array<int32_t, kLlmcHeaderInts> header = llmc_header(n, wide);
  const ByteSpan pieces[2] = {{header.data(), kLlmcHeaderBytes}, {tokens, n * (wide ? 4 : 2)}};
  return write_file_atomic(path, pieces, 2);
}

}  // namespace

const char* token_file_format_name(TokenFileFormat format) {
  return format == TokenFileFormat::kLlmc ? "llm.c" : "raw uint16";
}

StatusOr<TokenFile> TokenFile::open(const std::string& path, TokenFileFormat format) {
  size_t file_bytes = 0;
  ZT_ASSIGN_OR_RETURN(const int raw_fd, open_regular(path, &file_bytes));
  ScopedFd fd(raw_fd);
  size_t token_offset = 0;
  size_t ntok = 0;
  bool wide = false;
  if (format == TokenFileFormat::kLlmc) {
    if (file_bytes == 0) {
      return Status::Corruption(path + ": empty file (0 bytes); an llm.c token file holds a 1024-byte header "
                                "and at least one token");
    }
    if (file_bytes < kLlmcHeaderBytes) {
      return Status::Corruption(path + ": file is " + std::to_string(file_bytes) +
                                " bytes, shorter than the 1024-byte llm.c header");
    }
    std::array<int32_t, kLlmcHeaderInts> header{};
    ZT_ASSIGN_OR_RETURN(const size_t got, read_prefix(fd.get(), header.data(), kLlmcHeaderBytes, path));
    if (got != kLlmcHeaderBytes) {
      return Status::IOError(path + ": file shrank while reading its header (" + std::to_string(got) + " of " +
                             std::to_string(kLlmcHeaderBytes) + " bytes)");
    }
    // header[3..255] are zero in files llm.c writes but, like llm.c's reader, unchecked.
    ZT_RETURN_IF_ERROR(check_llmc(path, header.data(), file_bytes, &ntok, &wide));
    token_offset = kLlmcHeaderBytes;
  } else {
    if (file_bytes == 0) {
      return Status::Corruption(path + ": empty file (0 bytes); a raw uint16 token file holds at least one token");
    }
    if (file_bytes % sizeof(uint16_t) != 0) {
      return Status::Corruption(path + ": odd length " + std::to_string(file_bytes) +
                                " bytes; a raw uint16 token file holds 2 bytes per token");
    }
    ntok = file_bytes / sizeof(uint16_t);
  }
  void* map = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (map == MAP_FAILED) return posix_error("cannot mmap token file", path);
  // The mapping outlives the descriptor, which ScopedFd closes now.
  TokenFile file;
  file.path_ = path;
  file.format_ = format;
  file.map_ = map;
  file.map_bytes_ = file_bytes;
  file.tokens_ = static_cast<const char*>(map) + token_offset;
  file.wide_ = wide;
  file.size_ = ntok;
  return file;
}

StatusOr<TokenFileFormat> TokenFile::detect(const std::string& path) {
  size_t file_bytes = 0;
  ZT_ASSIGN_OR_RETURN(const int raw_fd, open_regular(path, &file_bytes));
  ScopedFd fd(raw_fd);
  if (file_bytes == 0) {
    return Status::Corruption(path + ": empty file (0 bytes); cannot detect a token file format");
  }
  int32_t first = 0;
  ZT_ASSIGN_OR_RETURN(const size_t got, read_prefix(fd.get(), &first, sizeof(first), path));
  if (got < sizeof(first)) return TokenFileFormat::kRawUint16;
  return first == kLlmcMagic || first == kLlmcLlama3Magic ? TokenFileFormat::kLlmc : TokenFileFormat::kRawUint16;
}

TokenFile::TokenFile(TokenFile&& other) noexcept
    : path_(std::move(other.path_)),
      format_(other.format_),
      map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      tokens_(std::exchange(other.tokens_, nullptr)),
      wide_(other.wide_),
      size_(std::exchange(other.size_, 0)) {}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    reset();
    path_ = std::move(other.path_);
    format_ = other.format_;
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    tokens_ = std::exchange(other.tokens_, nullptr);
    wide_ = other.wide_;
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

TokenFile::~TokenFile() { reset(); }

void TokenFile::reset() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  tokens_ = nullptr;
  size_ = 0;
}

Status TokenFile::check_tokens_below(uint32_t vocab_size) const {
  for (size_t i = 0; i < size_; ++i) {
    const uint32_t t = (*this)[i];
    if (t >= vocab_size) {
      return Status::InvalidArgument(path_ + ": token " + std::to_string(t) + " at position " + std::to_string(i) +
                                     " is >= vocab_size " + std::to_string(vocab_size) +
                                     "; the file was made with a different tokenizer or for a different model");
    }
  }
  return Status::OK();
}

Status write_token_file(const std::string& path, const uint16_t* tokens, size_t n, TokenFileFormat format) {
  ZT_RETURN_IF_ERROR(check_writable(path, tokens, n, token_file_format_name(format)));
  const ByteSpan body{tokens, n * sizeof(uint16_t)};
  if (format == TokenFileFormat::kRawUint16) return write_file_atomic(path, &body, 1);
  return write_llmc(path, tokens, n, false);
}

Status write_token_file_u32(const std::string& path, const uint32_t* tokens, size_t n) {
  ZT_RETURN_IF_ERROR(check_writable(path, tokens, n, "llm.c uint32"));
  return write_llmc(path, tokens, n, true);
}

Status write_token_file_from_ids(const std::string& path, const std::vector<int32_t>& ids, TokenFileFormat format,
                                 bool wide) {
  if (wide && format != TokenFileFormat::kLlmc) {
    return Status::InvalidArgument(path + ": raw uint16 token files hold ids up to 65535; a vocabulary over 65536 ids "
                                   "needs the llm.c format (uint32 tokens)");
  }
  const int64_t limit = wide ? std::numeric_limits<int32_t>::max() : std::numeric_limits<uint16_t>::max();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > limit) {
      return Status::InvalidArgument(path + ": token id " + std::to_string(ids[i]) + " at position " +
                                     std::to_string(i) + " is outside [0, " + std::to_string(limit) +
                                     "] and cannot be stored as " + (wide ? "uint32" : "uint16"));
    }
  }
  if (wide) {
    const std::vector<uint32_t> tokens(ids.begin(), ids.end());
    return write_token_file_u32(path, tokens.data(), tokens.size());
  }
  const std::vector<uint16_t> tokens(ids.begin(), ids.end());
  return write_token_file(path, tokens.data(), tokens.size(), format);
}

}  // namespace zt
