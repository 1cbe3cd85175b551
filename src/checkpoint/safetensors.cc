// safetensors writer and validating reader.
#include "checkpoint/safetensors.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "io/checksum.h"
#include "io/atomic_file.h"
#include "io/json_strict.h"

namespace zt {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct StDTypeInfo {
  StDType dtype;
  const char* name;
  size_t size;
};
constexpr StDTypeInfo kDTypes[] = {{StDType::kF32, "F32", 4}, {StDType::kI32, "I32", 4}, {StDType::kU16, "U16", 2},
                                 {StDType::kF16, "F16", 2}, {StDType::kBF16, "BF16", 2}, {StDType::kI64, "I64", 8},
                                 {StDType::kU8, "U8", 1}, {StDType::kF64, "F64", 8}};

bool dtype_from_name(const std::string& name, StDType* out) {
  for (const StDTypeInfo& d : kDTypes) {
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

// numel * elem_size with overflow detection.
bool byte_size(const std::vector<int64_t>& shape, size_t elem, size_t* out) {
  unsigned __int128 total = elem;
  for (int64_t d : shape) {
    if (d < 0) return false;
    total *= static_cast<unsigned __int128>(d);
    if (total > (static_cast<unsigned __int128>(1) << 62)) return false;
  }
  *out = static_cast<size_t>(total);
  return true;
}

// A JSON value for an error message, cut to 60 characters (a header may be 100 MB).
std::string brief(const Json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

const char* st_dtype_name(StDType dtype) {
  for (const StDTypeInfo& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

size_t st_dtype_size(StDType dtype) {
  for (const StDTypeInfo& d : kDTypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 0;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Status write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                         const std::map<std::string, std::string>& metadata, FileDigest* digest,
                         const ProgressFn& progress) {
  std::vector<const TensorToWrite*> order;
  for (const TensorToWrite& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i]->name == order[i - 1]->name) {
      return Status::InvalidArgument(path + ": duplicate tensor name " + order[i]->name);
    }
  }
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<ByteSpan> pieces(2);
  size_t offset = 0;
  for (const TensorToWrite* t : order) {
    size_t bytes = 0;
    if (!byte_size(t->shape, st_dtype_size(t->dtype), &bytes)) {
      return Status::InvalidArgument(path + ": tensor " + t->name + " has an invalid shape");
    }
    header[t->name] = {{"dtype", st_dtype_name(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + bytes}}};
    pieces.push_back({t->data, bytes});
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  pieces[0] = {len, 8};
  pieces[1] = {text.data(), text.size()};
  if (digest != nullptr) {
    Checksummer sum;
    digest->bytes = 0;
    for (const ByteSpan& p : pieces) {
      sum.update(p.data, p.size);
      digest->bytes += p.size;
    }
    digest->checksum = sum.digest();
  }
  return write_file_atomic(path, pieces.data(), pieces.size(), progress);
}

StatusOr<SafetensorsFile> SafetensorsFile::read(const std::string& path) {
  ZT_ASSIGN_OR_RETURN(MappedFile map, MappedFile::open(path));
  return from_mapping(std::make_shared<const MappedFile>(std::move(map)), path);
}

StatusOr<SafetensorsFile> SafetensorsFile::from_mapping(std::shared_ptr<const MappedFile> map, const std::string& label) {
  const char* base = map->data();
  const size_t size = map->size();
  return parse_view(std::move(map), base, size, label);
}

StatusOr<SafetensorsFile> SafetensorsFile::parse(std::string bytes, const std::string& label) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const char* base = owned->data();
  const size_t size = owned->size();
  return parse_view(std::move(owned), base, size, label);
}

StatusOr<SafetensorsFile> SafetensorsFile::parse_view(std::shared_ptr<const void> storage, const char* base, size_t size,
                                                      const std::string& label) {
  auto bad = [&label](const std::string& what) { return Status::Corruption(label + ": " + what); };
  if (size < 8) return bad("file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(base[i])) << (8 * i);
  if (n > kMaxHeaderBytes) return bad("header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > size - 8) {
    return bad("header length " + std::to_string(n) + " runs past the end of the " + std::to_string(size) + "-byte file");
  }
  auto parsed = parse_json_strict(std::string(base + 8, n), label + " header");
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  const Json& header = parsed.value();
  if (!header.is_object()) return bad("header is not a JSON object");
  SafetensorsFile file;
  file.label_ = label;
  file.data_start_ = 8 + n;
  const size_t data_size = size - file.data_start_;
  std::vector<std::tuple<size_t, size_t, std::string>> by_offset;  // (begin, end, name)
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const Json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return bad("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) return bad("__metadata__/" + m.key() + " is not a string");
        file.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor " + name;
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets")) {
      return bad(where + ": expected an object with dtype, shape and data_offsets");
    }
    SafetensorsEntry e{};
    if (!v["dtype"].is_string() || !dtype_from_name(v["dtype"].get<std::string>(), &e.dtype)) {
      return bad(where + ": unsupported dtype " + brief(v["dtype"]));
    }
    if (!v["shape"].is_array()) return bad(where + ": shape is not an array");
    for (const Json& d : v["shape"]) {
      if (!d.is_number_unsigned()) return bad(where + ": shape " + brief(v["shape"]) + " has a non-integer or negative dimension");
      e.shape.push_back(d.get<int64_t>());
    }
    const Json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned()) {
      return bad(where + ": data_offsets must be two non-negative integers");
    }
    e.begin = off[0].get<size_t>();
    e.end = off[1].get<size_t>();
    size_t expected = 0;
    if (!byte_size(e.shape, st_dtype_size(e.dtype), &expected)) return bad(where + ": shape overflows");
    if (e.end < e.begin) {
      return bad(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 ") end before they begin");
    }
    if (e.end - e.begin != expected) {
      return bad(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ") hold " +
                 std::to_string(e.end - e.begin) + " bytes, but " + st_dtype_name(e.dtype) + " " +
                 shape_to_string(e.shape) + " needs " + std::to_string(expected));
    }
    if (e.end > data_size) {
      return bad(where + ": data ends at byte " + std::to_string(e.end) + " of a " + std::to_string(data_size) +
                 "-byte data buffer (truncated file?)");
    }
    by_offset.push_back({e.begin, e.end, name});
    file.entries_[name] = e;
  }
  // By [begin, end) as huggingface/safetensors does, so an empty tensor at the offset
  // where another one starts is accepted whatever the two names are.
  std::sort(by_offset.begin(), by_offset.end());
  size_t cursor = 0;
  for (const auto& [begin, end, name] : by_offset) {
    if (begin != cursor) {
      return bad("tensor " + name + " starts at byte " + std::to_string(begin) + " but the previous tensor ends at " +
                 std::to_string(cursor) + (begin > cursor ? " (hole)" : " (overlap)"));
    }
    cursor = end;
  }
  if (cursor != data_size) {
    return bad("tensors cover " + std::to_string(cursor) + " bytes but the data buffer has " +
               std::to_string(data_size) + " (trailing bytes)");
  }
  file.storage_ = std::move(storage);
  file.base_ = base;
  file.size_ = size;
  return file;
}

const void* SafetensorsFile::data(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return nullptr;
  return base_ + data_start_ + it->second.begin;
}

Status SafetensorsFile::read_f32(const std::string& name, const std::vector<int64_t>& shape, float* out) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return Status::NotFound(label_ + ": no tensor named " + name);
  const SafetensorsEntry& e = it->second;
  if (e.dtype != StDType::kF32) {
    return Status::InvalidArgument(label_ + ": tensor " + name + " has dtype " + st_dtype_name(e.dtype) + ", expected F32");
  }
  if (e.shape != shape) {
    return Status::InvalidArgument(label_ + ": tensor " + name + " has shape " + shape_to_string(e.shape) +
                                   ", expected " + shape_to_string(shape));
  }
  if (e.end > e.begin) std::memcpy(out, data(name), e.end - e.begin);  // out may be null for an empty tensor
  return Status::OK();
}

}  // namespace zt
