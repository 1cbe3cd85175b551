// Verified, resharding checkpoint load; see sharded_load.h.
#include "checkpoint/sharded_load.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "io/checksum.h"
#include "checkpoint/latest_file.h"
#include "checkpoint/reshard.h"
#include "checkpoint/safetensors.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"
#include "io/mapped_file.h"
#include "tensor/buffer.h"

namespace zt {

namespace {

Status read_manifest(const std::string& dir, const std::string* expected_checksum, Manifest* out) {
  const std::string path = dir + "/manifest.json";
  auto text = read_file(path, kMaxManifestBytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(dir + " is not a complete checkpoint: it has no manifest.json");
    }
    return text.status();
  }
  if (expected_checksum != nullptr) {
    const std::string actual = checksum_hex(text->data(), text->size());
    if (actual != *expected_checksum) {
      return Status::Corruption(path + ": checksum mismatch: expected " + *expected_checksum + " (from latest), actual " +
                                actual + " (the manifest was modified or damaged)");
    }
  }
  ZT_ASSIGN_OR_RETURN(*out, parse_manifest(text.value(), path));
  return Status::OK();
}

// Names what is damaged in a file whose checksum is wrong: the first piece whose bytes
// disagree with the manifest, else the header.
Status damaged_file(const CheckpointRef& ckpt, const ManifestFile& f, std::shared_ptr<const MappedFile> map,
                    const std::string& actual) {
  const std::string path = ckpt.dir + "/" + f.name;
  const std::string file_sums = " (file checksum expected " + f.checksum + ", actual " + actual + ")";
  auto parsed = SafetensorsFile::from_mapping(std::move(map), path);
  if (parsed.ok()) {
    for (const ManifestPiece& p : ckpt.manifest.pieces) {
      if (p.file != f.name) continue;
      const SafetensorsEntry* e = parsed->has(p.entry()) ? &parsed->entries().at(p.entry()) : nullptr;
      if (e == nullptr) return Status::Corruption(path + ": tensor " + p.entry() + " is missing" + file_sums);
      const std::string got = checksum_hex(parsed->data(p.entry()), e->end - e->begin);
      if (got != p.checksum) {
        return Status::Corruption(path + ": tensor " + p.entry() + ": checksum mismatch: expected " + p.checksum +
                                  ", actual " + got + file_sums);
      }
    }
    for (const ManifestRankState& r : ckpt.manifest.rank_states) {
      const SafetensorsEntry* e = r.file == f.name && parsed->has(r.entry()) ? &parsed->entries().at(r.entry()) : nullptr;
      if (e != nullptr && checksum_hex(parsed->data(r.entry()), e->end - e->begin) != r.checksum) {
        return Status::Corruption(path + ": " + r.entry() + ": checksum mismatch: expected " + r.checksum + file_sums);
      }
    }
  }
  return Status::Corruption(path + ": header damaged: checksum mismatch: expected " + f.checksum + ", actual " + actual +
                            (parsed.ok() ? "" : " (" + parsed.status().message() + ")"));
}

}  // namespace

StatusOr<SafetensorsFile> read_verified_shard(const CheckpointRef& ckpt, const ManifestFile& f) {
  const std::string path = ckpt.dir + "/" + f.name;
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) {
    if (mapped.status().code() == StatusCode::kNotFound) return Status::Corruption(path + ": missing (the manifest lists it)");
    return mapped.status();
  }
  auto map = std::make_shared<const MappedFile>(std::move(mapped).value());
  if (map->size() != f.bytes) {
    return Status::Corruption(path + ": " + std::to_string(map->size()) + " bytes, but the manifest says " +
                              std::to_string(f.bytes) + " (truncated or overwritten)");
  }
  const std::string actual = checksum_hex(map->data(), map->size());
  if (actual != f.checksum) return damaged_file(ckpt, f, std::move(map), actual);
  ZT_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::from_mapping(std::move(map), path));
  for (const ManifestPiece& p : ckpt.manifest.pieces) {
    if (p.file != f.name) continue;
    auto it = file.entries().find(p.entry());
    const std::vector<int64_t> want = {static_cast<int64_t>(p.end - p.begin)};
    if (it == file.entries().end() || it->second.dtype != StDType::kF32 || it->second.shape != want) {
      return Status::Corruption(path + ": tensor " + p.entry() + " is missing or not F32 " + shape_to_string(want));
    }
    const std::string got = checksum_hex(file.data(p.entry()), it->second.end - it->second.begin);
    if (got != p.checksum) {
      return Status::Corruption(path + ": tensor " + p.entry() + ": checksum mismatch: expected " + p.checksum +
                                ", actual " + got);
    }
  }
  return file;
}

namespace {

struct Need {
  int spec;
  const StateArray* array;
  ElementRange range;  // tp-local elements of the tensor
};

}  // namespace

StatusOr<CheckpointRef> open_checkpoint(const std::string& path) {
  CheckpointRef ref;
  if (file_exists(path + "/latest")) {
    ZT_ASSIGN_OR_RETURN(const std::string text, read_file(path + "/latest", kMaxLatestBytes));
    ZT_ASSIGN_OR_RETURN(const LatestPointer latest, parse_latest(text, path + "/latest"));
    ref.dir = path + "/" + latest.tag;
    ZT_RETURN_IF_ERROR(read_manifest(ref.dir, &latest.manifest_checksum, &ref.manifest));
  } else if (file_exists(path + "/manifest.json")) {
    ref.dir = path;
    ZT_RETURN_IF_ERROR(read_manifest(ref.dir, nullptr, &ref.manifest));
  } else {
    return Status::NotFound(path + " is not a checkpoint: it has neither a latest file nor a manifest.json");
  }
  return ref;
}

Status check_same_model(const CheckpointRef& ckpt, const GptConfig& model) {
  const GptConfig& m = ckpt.manifest.model;
  if (!m.same_model(model)) {
    return Status::InvalidArgument("checkpoint " + ckpt.dir + " holds a different model (" + m.to_string() +
                                   ") than the configuration (" + model.to_string() + ")");
  }
  return Status::OK();
}

Status load_state(const CheckpointRef& ckpt, const RankStateView& view, const std::vector<std::string>& kinds,
                  const ProgressFn& progress) {
  const Manifest& m = ckpt.manifest;
  const ParamTable& table = *view.table;
  std::map<std::pair<std::string, std::string>, std::vector<const ManifestPiece*>> pieces_of;  // (tensor, kind)
  for (const ManifestPiece& p : m.pieces) pieces_of[{p.tensor, p.kind}].push_back(&p);
  std::vector<Need> needs;
  std::set<std::string> files;
  for (const std::string& kind : kinds) {
    if (!m.has_kind(kind)) {
      return Status::InvalidArgument("checkpoint " + ckpt.dir + " has no \"" + kind + "\" state (it holds " +
                                     Json(m.kinds).dump() + (m.engine.optimizer.empty() ? ", weights only" : ", saved with " + m.engine.optimizer) + ")");
    }
    const StateArray* a = view.array(kind);
    ZT_CHECK(a != nullptr, "load_state: the view has no %s array", kind.c_str());
    for (int i = 0; i < static_cast<int>(table.specs().size()); ++i) {
      const TensorSpec& s = table.at(i);
      const size_t lo = std::max(s.offset, a->held.begin), hi = std::min(s.offset + s.numel, a->held.end);
      if (lo >= hi) continue;
      const ManifestTensor* saved = m.tensor(s.name);
      if (saved == nullptr) return Status::InvalidArgument("checkpoint " + ckpt.dir + " has no tensor " + s.name);
      ZT_RETURN_IF_ERROR(check_reshardable(s, *saved, "checkpoint " + ckpt.dir));
      needs.push_back({i, a, {lo - s.offset, hi - s.offset}});
      for (const ManifestPiece* p : pieces_of[{s.name, kind}]) files.insert(p->file);
    }
  }
  // Verify every needed file before changing any state.
  std::map<std::string, SafetensorsFile> shards;
  uint64_t total = 0, done = 0;
  for (const std::string& name : files) total += m.file(name)->bytes;
  for (const std::string& name : files) {
    ZT_ASSIGN_OR_RETURN(SafetensorsFile f, read_verified_shard(ckpt, *m.file(name)));
    shards.emplace(name, std::move(f));
    done += m.file(name)->bytes;
    if (progress) progress(done, total);
  }
  for (const Need& n : needs) {
    const TensorSpec& s = table.at(n.spec);
    const ManifestTensor& saved = *m.tensor(s.name);
    float* out = n.array->data + (s.offset + n.range.begin - n.array->held.begin);
    const std::vector<const ManifestPiece*>& pieces = pieces_of[{s.name, n.array->kind}];
    bool whole = (s.tp_dim < 0 || table.tp_size() == 1) && saved.shape == (s.global_shape.empty() ? s.shape : s.global_shape);
    for (const ManifestPiece* p : pieces) whole = whole && p->tp_size == 1;
    if (whole) {  // neither side cuts the tensor: copy the overlaps of the pieces directly
      for (const ManifestPiece* p : pieces) {
        const size_t lo = std::max<size_t>(p->begin, n.range.begin), hi = std::min<size_t>(p->end, n.range.end);
        if (lo >= hi) continue;
        const float* src = static_cast<const float*>(shards.at(p->file).data(p->entry()));
        std::memcpy(out + (lo - n.range.begin), src + (lo - p->begin), (hi - lo) * sizeof(float));
      }
      continue;
    }
    ZT_ASSIGN_OR_RETURN(FloatBuffer global, FloatBuffer::allocate(saved.numel(), "a checkpoint tensor being resharded"));
    for (const ManifestPiece* p : pieces) {
      scatter_piece(saved, *p, static_cast<const float*>(shards.at(p->file).data(p->entry())), global.data());
    }
    read_slice(s, table.tp_rank(), table.tp_size(), saved, global.data(), n.range.begin, n.range.end, out);
  }
  return Status::OK();
}

Status load_whole_params(const CheckpointRef& ckpt, const ParamTable& table, float* params) {
  RankStateView view;
  view.table = &table;
  view.arrays.push_back({"param", params, {0, table.numel()}});
  view.save_range = {0, table.numel()};
  return load_state(ckpt, view, {"param"});
}

}  // namespace zt
