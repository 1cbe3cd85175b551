// safetensors files (huggingface/safetensors format): an 8-byte little-endian header
// length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end)}, and
// optionally "__metadata__": {string: string}}, then the data buffer.
//
// The writer sorts tensors by name (all zerotrain tensors share one alignment), pads the
// header with spaces to a multiple of 8 and writes atomically. The reader trusts nothing:
// header length within the file and under 100 MB, valid JSON without duplicate keys,
// known dtypes, shapes whose byte size matches data_offsets (overflow-checked), tensors
// that tile the data buffer exactly (no holes, no overlap) and end at the end of file.
// Every error names the file and what is wrong. Reading never executes code and never
// allocates more than the file's own size.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/progress_fn.h"
#include "core/status.h"
#include "io/mapped_file.h"

namespace zt {

enum class StDType { kF32, kI32, kU16, kF16, kBF16, kI64, kU8, kF64 };
const char* st_dtype_name(StDType dtype);
size_t st_dtype_size(StDType dtype);

struct TensorToWrite {
  std::string name;
  StDType dtype = StDType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // shape's product * dtype_size bytes
};

// What a writer put in a file: its size and XXH3-64 (io/checksum.h).
struct FileDigest {
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

// Writes the tensors atomically (io/atomic_file.h). Duplicate names are refused.
// `digest`, if given, receives the size and checksum of the bytes written.
Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata = {}, FileDigest* digest = nullptr,
                         const ProgressFn& progress = {});

struct SafetensorsEntry {
  StDType dtype;
  std::vector<int64_t> shape;
  size_t begin;  // offset into the data buffer
  size_t end;
};

class SafetensorsFile {
 public:
  // Maps (io/mapped_file.h) and validates the whole file.
  static StatusOr<SafetensorsFile> read(const std::string& path);
  // Validates a file already mapped; the SafetensorsFile keeps the mapping alive.
  static StatusOr<SafetensorsFile> from_mapping(std::shared_ptr<const MappedFile> map, const std::string& label);
  // Validates bytes already in memory; `label` names them in errors (usually the path).
  static StatusOr<SafetensorsFile> parse(std::string bytes, const std::string& label);

  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Pointer to a tensor's bytes, or nullptr if absent.
  const void* data(const std::string& name) const;
  // Copies a float32 tensor of exactly `shape` into out; errors name file, tensor, shapes.
  Status read_f32(const std::string& name, const std::vector<int64_t>& shape, float* out) const;
  const std::string& label() const { return label_; }

 private:
  static StatusOr<SafetensorsFile> parse_view(std::shared_ptr<const void> storage, const char* base, size_t size,
                                              const std::string& label);

  std::string label_;
  std::shared_ptr<const void> storage_;  // the mapping or the string that holds the bytes
  const char* base_ = nullptr;           // the whole file: base_[0, size_)
  size_t size_ = 0;
  size_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace zt
