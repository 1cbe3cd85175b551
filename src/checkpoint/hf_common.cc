// HuggingFace model directories: sharded safetensors writing and reading; see hf_common.h.
#include "checkpoint/hf_common.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "backend/backend.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"

namespace zt {

namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr size_t kMaxIndexBytes = 256u << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::string parent_dir(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

std::string base_name(const std::string& file) {
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

// A file name inside the model directory: no directories, not hidden.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s.size() <= 255 && s[0] != '.' && s.find('/') == std::string::npos &&
         s.find('\0') == std::string::npos;
}

std::string shard_name(size_t index, size_t count) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return buf;
}

// "model-DDDDD-of-DDDDD.safetensors", the names shard_name makes.
bool is_shard_name(const std::string& s) {
  if (s.size() != 32 || s.compare(0, 6, "model-") != 0 || s.compare(11, 4, "-of-") != 0 || !ends_with(s, ".safetensors")) {
    return false;
  }
  for (size_t i : {6, 7, 8, 9, 10, 15, 16, 17, 18, 19}) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

const ActivationOps<half_t>* half_ops_for(StDType dtype) {
  if (dtype != StDType::kBF16 && dtype != StDType::kF16) return nullptr;
  return backend_for(Device::kCpu, dtype == StDType::kBF16 ? DType::kBF16 : DType::kF16).value()->half_ops();
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// One shard: the tensors `picked` of `all`, rounded to the stored dtype.
Status write_shard(const std::string& path, const std::vector<HfTensor>& all, const std::vector<size_t>& picked,
                   const HfExportOptions& o, uint64_t total, uint64_t* done) {
  const ActivationOps<half_t>* half = half_ops_for(o.dtype);
  std::vector<std::vector<half_t>> narrowed;
  narrowed.reserve(picked.size());
  std::vector<TensorToWrite> out;
  uint64_t bytes = 0;
  for (size_t i : picked) {
    const HfTensor& t = all[i];
    const int64_t n = numel_of(t.shape);
    TensorToWrite w{t.name, o.dtype, t.shape, t.data};
    if (half != nullptr) {
      narrowed.emplace_back(static_cast<size_t>(n));
      half->from_f32(narrowed.back().data(), t.data, n);
      w.data = narrowed.back().data();
    }
    bytes += static_cast<uint64_t>(n) * st_dtype_size(o.dtype);
    out.push_back(std::move(w));
  }
  ProgressFn progress;
  if (o.progress) {
    const uint64_t base = *done;
    progress = [&o, base, total](uint64_t d, uint64_t) { o.progress(std::min(base + d, total), total); };
  }
  ZT_RETURN_IF_ERROR(write_safetensors(path, out, {{"format", "pt"}}, nullptr, progress));
  *done += bytes;
  return Status::OK();
}

// Removes the weight files of an earlier export that this one did not write.
Status remove_stale(const std::string& dir, const std::set<std::string>& keep) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (keep.count(n) == 0 && (n == kSingleFile || n == kIndexFile || is_shard_name(n))) stale.push_back(e.path());
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  for (const auto& p : stale) {
    if (!std::filesystem::remove(p, ec) && ec) {
      return Status::IOError("cannot remove " + p.string() + " (left by an earlier export): " + ec.message());
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<uint64_t> parse_shard_size(const std::string& text) {
  struct Unit {
    const char* suffix;
    double scale;
  };
  constexpr Unit kUnits[] = {{"KIB", 1024.0}, {"MIB", 1048576.0}, {"GIB", 1073741824.0}, {"TIB", 1099511627776.0},
                             {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1.0}};
  std::string upper;
  for (char c : text) {
    if (c != ' ') upper.push_back(c);
  }
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1.0;
  std::string number = upper;
  for (const Unit& u : kUnits) {
    if (ends_with(upper, u.suffix)) {
      scale = u.scale;
      number = upper.substr(0, upper.size() - std::strlen(u.suffix));
      break;
    }
  }
  double value = 0.0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double bytes = value * scale;
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !(bytes >= 1.0) || bytes > 4e18) {
    return Status::InvalidArgument("max shard size \"" + text + "\": expected a positive size in bytes, or with a unit "
                                   "(KB, MB, GB, TB = powers of 10; KiB, MiB, GiB, TiB = powers of 2), e.g. 5GB");
  }
  return static_cast<uint64_t>(bytes);
}

const char* hf_torch_dtype(StDType dtype) {
  return dtype == StDType::kBF16 ? "bfloat16" : dtype == StDType::kF16 ? "float16" : "float32";
}

std::vector<std::vector<size_t>> plan_hf_shards(const std::vector<uint64_t>& tensor_bytes, uint64_t max_shard_bytes) {
  std::vector<std::vector<size_t>> shards;
  std::vector<size_t> current;
  uint64_t current_bytes = 0;
  for (size_t i = 0; i < tensor_bytes.size(); ++i) {
    const uint64_t b = tensor_bytes[i];
    if (b > max_shard_bytes) {  // its own shard, at once; the current one stays open
      shards.push_back({i});
      continue;
    }
    if (current_bytes + b > max_shard_bytes) {
      shards.push_back(std::move(current));
      current.clear();
      current_bytes = 0;
    }
    current.push_back(i);
    current_bytes += b;
  }
  if (!current.empty()) shards.push_back(std::move(current));
  return shards;
}

Status write_hf_weights(const std::string& dir, const std::vector<HfTensor>& tensors, const HfExportOptions& o) {
  ZT_CHECK(o.dtype == StDType::kF32 || o.dtype == StDType::kBF16 || o.dtype == StDType::kF16, "export dtype %s",
           st_dtype_name(o.dtype));
  ZT_CHECK(!tensors.empty() && o.max_shard_bytes > 0, "write_hf_weights: no tensors or a zero shard size");
  std::vector<uint64_t> bytes;
  uint64_t total = 0;
  for (const HfTensor& t : tensors) {
    bytes.push_back(static_cast<uint64_t>(numel_of(t.shape)) * st_dtype_size(o.dtype));
    total += bytes.back();
  }
  const std::vector<std::vector<size_t>> shards = plan_hf_shards(bytes, o.max_shard_bytes);
  std::set<std::string> written;
  Json weight_map = Json::object();
  uint64_t done = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string name = shards.size() == 1 ? kSingleFile : shard_name(s, shards.size());
    ZT_RETURN_IF_ERROR(write_shard(dir + "/" + name, tensors, shards[s], o, total, &done));
    written.insert(name);
    for (size_t i : shards[s]) {
      ZT_CHECK(!weight_map.contains(tensors[i].name), "duplicate tensor %s", tensors[i].name.c_str());
      weight_map[tensors[i].name] = name;
    }
  }
  if (shards.size() > 1) {
    const Json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    ZT_RETURN_IF_ERROR(write_file_atomic(dir + "/" + kIndexFile, index.dump(2) + "\n"));
    written.insert(kIndexFile);
  }
  return remove_stale(dir, written);
}

bool is_hf_model_path(const std::string& path) {
  if (ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json")) return true;
  return file_exists(path + "/" + kSingleFile) || file_exists(path + "/" + kIndexFile);
}

std::string hf_config_path(const std::string& path) {
  return (is_directory(path) ? path : parent_dir(path)) + "/config.json";
}

StatusOr<Json> read_hf_config_json(const std::string& path) {
  auto text = read_file(path, 1 << 20);
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) return text.status();
    return Status::NotFound(path + ": missing; a HuggingFace model needs its config.json beside its weights");
  }
  auto parsed = parse_json_strict(text.value(), path);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  if (!parsed->is_object()) return Status::Corruption(path + ": not a JSON object");
  return std::move(parsed).value();
}

StatusOr<HfWeights> HfWeights::open(const std::string& path) {
  HfWeights w;
  std::string file = path;
  if (is_directory(path)) {
    if (file_exists(path + "/" + kSingleFile)) {
      file = path + "/" + kSingleFile;
    } else if (file_exists(path + "/" + kIndexFile)) {
      file = path + "/" + kIndexFile;
    } else {
      return Status::NotFound(path + ": holds neither " + kSingleFile + " nor " + kIndexFile);
    }
  }
  w.dir_ = parent_dir(file);
  w.label_ = file;
  if (ends_with(file, ".index.json")) {
    ZT_RETURN_IF_ERROR(w.open_index(file));
  } else {
    ZT_RETURN_IF_ERROR(w.add_file(file, nullptr));
  }
  return w;
}

Status HfWeights::open_index(const std::string& index_path) {
  ZT_ASSIGN_OR_RETURN(const std::string text, read_file(index_path, kMaxIndexBytes));
  auto parsed = parse_json_strict(text, index_path);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  const Json& j = parsed.value();
  const auto wm = j.is_object() ? j.find("weight_map") : j.end();
  if (!j.is_object() || wm == j.end() || !wm->is_object() || wm->empty()) {
    return Status::Corruption(index_path + ": /weight_map must be a non-empty object of tensor name -> shard file");
  }
  std::map<std::string, std::string> map;
  std::set<std::string> files;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    const std::string where = index_path + ": /weight_map/" + json_pointer_escape(it.key());
    if (!it.value().is_string()) return Status::Corruption(where + ": expected a file name, got " + it.value().dump());
    const std::string f = it.value().get<std::string>();
    if (!plain_file_name(f)) return Status::Corruption(where + ": \"" + f + "\" is not a plain file name beside the index");
    map[it.key()] = f;
    files.insert(f);
  }
  for (const std::string& f : files) ZT_RETURN_IF_ERROR(add_file(dir_ + "/" + f, &map));
  for (const auto& [tensor, f] : map) {
    if (!has(tensor)) {
      return Status::InvalidArgument(index_path + ": /weight_map lists tensor " + tensor + " in " + f +
                                     ", which does not hold it");
    }
  }
  return Status::OK();
}

Status HfWeights::add_file(const std::string& path, const std::map<std::string, std::string>* weight_map) {
  ZT_ASSIGN_OR_RETURN(SafetensorsFile st, SafetensorsFile::read(path));
  const std::string base = base_name(path);
  for (const auto& [name, e] : st.entries()) {
    if (weight_map != nullptr) {
      const auto it = weight_map->find(name);
      if (it == weight_map->end()) {
        return Status::InvalidArgument(path + ": tensor " + name + " is not listed in the index " + label_);
      }
      if (it->second != base) {
        return Status::InvalidArgument(path + ": tensor " + name + " is listed in the index " + label_ + " under " +
                                       it->second);
      }
    }
    if (!where_.emplace(name, files_.size()).second) {
      return Status::InvalidArgument(path + ": tensor " + name + " also appears in " + file_of(name));
    }
  }
  files_.push_back(std::move(st));
  return Status::OK();
}

std::vector<std::string> HfWeights::names() const {
  std::vector<std::string> out;
  out.reserve(where_.size());
  for (const auto& [name, file] : where_) out.push_back(name);
  return out;
}

const std::string& HfWeights::file_of(const std::string& name) const { return files_.at(where_.at(name)).label(); }

const SafetensorsEntry& HfWeights::entry(const std::string& name) const {
  return files_.at(where_.at(name)).entries().at(name);
}

Status HfWeights::read_f32(const std::string& name, const std::vector<int64_t>& shape, float* out) const {
  const auto it = where_.find(name);
  if (it == where_.end()) return Status::NotFound(label_ + ": no tensor named " + name);
  const SafetensorsFile& st = files_[it->second];
  const SafetensorsEntry& e = st.entries().at(name);
  if (e.dtype != StDType::kF32 && e.dtype != StDType::kBF16 && e.dtype != StDType::kF16) {
    return Status::InvalidArgument(st.label() + ": tensor " + name + " has dtype " + st_dtype_name(e.dtype) +
                                   "; zerotrain reads F32, BF16 or F16 weights");
  }
  if (e.shape != shape) {
    return Status::InvalidArgument(st.label() + ": tensor " + name + " has shape " + shape_to_string(e.shape) +
                                   ", expected " + shape_to_string(shape));
  }
  const int64_t n = numel_of(shape);
  if (n == 0) return Status::OK();
  if (e.dtype == StDType::kF32) {
    std::memcpy(out, st.data(name), static_cast<size_t>(n) * sizeof(float));
    return Status::OK();
  }
  std::vector<half_t> aligned(static_cast<size_t>(n));  // the file's offsets need not be 2-byte aligned
  std::memcpy(aligned.data(), st.data(name), aligned.size() * sizeof(half_t));
  half_ops_for(e.dtype)->to_f32(out, aligned.data(), n);
  return Status::OK();
}

}  // namespace zt
