// TFRecord framing and the hand-encoded Event / Summary protos; see tfevents.h.
#include "io/tfevents.h"

#include <isa-l/crc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/host_name.h"
#include "io/filesystem.h"

namespace zt {

namespace {

void varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

template <typename T>
void fixed(std::string* out, T v) {  // little-endian, as x86-64 stores it
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

void bytes_field(std::string* out, int field, const std::string& data) {
  varint(out, static_cast<uint64_t>(field) << 3 | 2);  // wire type 2: length-delimited
  varint(out, data.size());
  out->append(data);
}

std::string event_header(int64_t step, double wall_time) {
  std::string e;
  e.push_back(0x09);  // field 1, wire type 1 (64-bit): wall_time
  fixed(&e, wall_time);
  e.push_back(0x10);  // field 2, wire type 0 (varint): step
  varint(&e, static_cast<uint64_t>(step));
  return e;
}

}  // namespace

uint32_t crc32c(const void* data, size_t bytes) {
  return ~crc32_iscsi(static_cast<unsigned char*>(const_cast<void*>(data)), static_cast<int>(bytes), 0xFFFFFFFFu);
}

uint32_t masked_crc32c(const void* data, size_t bytes) {
  const uint32_t c = crc32c(data, bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

StatusOr<std::unique_ptr<EventWriter>> EventWriter::create(const std::string& dir) {
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  char name[400];
  std::snprintf(name, sizeof(name), "/events.out.tfevents.%010lld.%s", static_cast<long long>(std::time(nullptr)),
                host_name().c_str());
  const std::string path = dir + name;
  FILE* f = std::fopen(path.c_str(), "ab");  // two writers in one second on one host append, never clobber
  if (f == nullptr) return Status::IOError("cannot create TensorBoard event file " + path + ": " + std::strerror(errno));
  std::unique_ptr<EventWriter> w(new EventWriter(path, f));
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::string first = event_header(0, static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9);
  bytes_field(&first, 3, "brain.Event:2");  // file_version
  ZT_RETURN_IF_ERROR(w->record(first));
  return w;
}

EventWriter::~EventWriter() { std::fclose(f_); }

Status EventWriter::scalars(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& values) {
  std::string summary;
  for (const auto& [tag, v] : values) {
    std::string value;
    bytes_field(&value, 1, tag);
    value.push_back(0x15);  // field 2, wire type 5 (32-bit): simple_value
    fixed(&value, v);
    bytes_field(&summary, 1, value);
  }
  std::string event = event_header(step, wall_time);
  bytes_field(&event, 5, summary);
  return record(event);
}

Status EventWriter::record(const std::string& event) {
  std::string r;
  const uint64_t n = event.size();
  fixed(&r, n);
  fixed(&r, masked_crc32c(r.data(), 8));
  r.append(event);
  fixed(&r, masked_crc32c(event.data(), event.size()));
  if (std::fwrite(r.data(), 1, r.size(), f_) != r.size() || std::fflush(f_) != 0) {
    return Status::IOError("writing TensorBoard event file " + path_ + ": " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace zt
