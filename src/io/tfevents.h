// TensorBoard event files: what TensorBoard (and tf.summary, torch's SummaryWriter)
// reads. A file is a sequence of TFRecords, each
//   uint64 length | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)
// (little-endian; CRC-32C from ISA-L, masked as TFRecord does), whose data is a
// serialized tensorboard `Event` (compat/proto/event.proto). The first event carries
// file_version "brain.Event:2"; the others a Summary of scalar values (summary.proto's
// legacy simple_value, which TensorBoard migrates to its scalar plugin on load). Only the
// few protobuf fields needed are encoded, by hand:
//   Event:   wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5
//   Summary: value = 1 (repeated);  Value: tag = 1 (string), simple_value = 2 (float)
// The file is named events.out.tfevents.<10-digit seconds>.<hostname>, as TensorFlow's
// EventsWriter names it, and every event is flushed when written (a killed run keeps
// what it logged).
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace zt {

uint32_t crc32c(const void* data, size_t bytes);         // CRC-32C (Castagnoli)
uint32_t masked_crc32c(const void* data, size_t bytes);  // TFRecord's ((c >> 15 | c << 17) + 0xa282ead8)

class EventWriter {
 public:
  // Creates `dir` as needed and a new event file in it; writes the file_version event.
  static StatusOr<std::unique_ptr<EventWriter>> create(const std::string& dir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // One event at `step` holding every (tag, value) as a scalar.
  Status scalars(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& values);
  const std::string& path() const { return path_; }

 private:
  EventWriter(std::string path, FILE* f) : path_(std::move(path)), f_(f) {}
  Status record(const std::string& event);
  std::string path_;
  FILE* f_;
};

}  // namespace zt
