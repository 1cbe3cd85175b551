// Collective checkpoint save; see sharded_save.h.
#include "checkpoint/sharded_save.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "io/checksum.h"
#include "checkpoint/latest_file.h"
#include "checkpoint/rank_state.h"
#include "checkpoint/safetensors.h"
#include "comm/gather_bytes.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"

namespace zt {

namespace {

std::string shard_name(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "rank_%05d.safetensors", rank);
  return buf;
}

ManifestTensor table_entry(const TensorSpec& s) {
  ManifestTensor t;
  t.name = s.name;
  t.shape = s.global_shape.empty() ? s.shape : s.global_shape;
  t.logical_rows = s.init_rows >= 0 && s.init_rows < t.shape[0] ? s.init_rows : -1;
  t.tp_dim = s.tp_dim;
  t.tp_groups = s.tp_groups;
  t.layer = s.layer;
  t.weight_decay = s.weight_decay;
  return t;
}

// This rank's shard file and its description for rank 0 (JSON: file, tensors, pieces).
StatusOr<Json> write_rank_shard(const RankStateView& view, const SaveRequest& req, int rank) {
  const ParamTable& table = *view.table;
  const std::string name = shard_name(rank);
  std::vector<TensorToWrite> tensors;
  Json entries = Json::array(), pieces = Json::array();
  for (const SavedRange& r : saved_ranges(view)) {
    const TensorSpec& s = table.at(r.spec);
    const ManifestTensor e = table_entry(s);
    entries.push_back({{"name", e.name}, {"shape", e.shape}, {"logical_rows", e.logical_rows}, {"tp_dim", e.tp_dim},
                       {"tp_groups", e.tp_groups}, {"layer", e.layer}, {"weight_decay", e.weight_decay}});
    const bool sliced = s.tp_dim >= 0;
    for (const std::string& kind : req.meta.kinds) {
      const StateArray* a = view.array(kind);
      if (a == nullptr) return Status::Internal("checkpoint save: this rank holds no " + kind + " state");
      const size_t lo = s.offset + r.begin, hi = s.offset + r.end;
      ZT_CHECK(lo >= a->held.begin && hi <= a->held.end, "%s of %s: elements [%zu, %zu) are not held", kind.c_str(),
               s.name.c_str(), lo, hi);
      const float* data = a->data + (lo - a->held.begin);
      tensors.push_back({kind + "/" + s.name, StDType::kF32, {static_cast<int64_t>(r.end - r.begin)}, data});
      pieces.push_back({{"tensor", s.name}, {"kind", kind}, {"file", name}, {"tp_rank", sliced ? table.tp_rank() : 0},
                        {"tp_size", sliced ? table.tp_size() : 1}, {"begin", r.begin}, {"end", r.end},
                        {"checksum", checksum_hex(data, (r.end - r.begin) * sizeof(float))}});
    }
  }
  const Json rank_state = add_rank_state(view.rank_arrays, name, rank, &tensors);
  FileDigest digest;
  const std::map<std::string, std::string> metadata = {{"format", "zerotrain-shard"}, {"tag", req.tag},
                                                        {"rank", std::to_string(rank)}};
  ZT_RETURN_IF_ERROR(write_safetensors(req.save_dir + "/" + req.tag + "/" + name, tensors, metadata, &digest, req.progress));
  Json out;
  out["file"] = {{"name", name}, {"rank", rank}, {"bytes", digest.bytes}, {"checksum", checksum_hex(digest.checksum)}};
  out["tensors"] = entries;
  out["pieces"] = pieces;
  out["rank_state"] = rank_state;
  return out;
}

// Rank 0: the manifest from every rank's description; parse_manifest's checks (tiling,
// names) run on the result before anything is written.
StatusOr<std::string> build_manifest(const SaveRequest& req, const std::vector<std::string>& parts) {
  Manifest m = req.meta;
  m.tag = req.tag;
  m.tensors.clear();
  m.files.clear();
  m.pieces.clear();
  std::map<std::string, Json> tensors;
  for (size_t r = 0; r < parts.size(); ++r) {
    const Json j = Json::parse(parts[r]);
    if (j.contains("error")) {
      return Status::IOError("rank " + std::to_string(r) + " could not write its shard: " + j["error"].get<std::string>());
    }
    const Json& f = j["file"];
    m.files.push_back({f["name"].get<std::string>(), f["rank"].get<int>(), f["bytes"].get<uint64_t>(),
                       f["checksum"].get<std::string>()});
    for (const Json& t : j["tensors"]) {
      auto [it, fresh] = tensors.emplace(t["name"].get<std::string>(), t);
      if (!fresh && it->second != t) {
        return Status::Internal("checkpoint save: ranks disagree on tensor " + it->first + ": " + it->second.dump() + " vs " + t.dump());
      }
    }
    for (const Json& p : j["pieces"]) {
      ManifestPiece q;
      q.tensor = p["tensor"].get<std::string>();
      q.kind = p["kind"].get<std::string>();
      q.file = p["file"].get<std::string>();
      q.tp_rank = p["tp_rank"].get<int>();
      q.tp_size = p["tp_size"].get<int>();
      q.begin = p["begin"].get<uint64_t>();
      q.end = p["end"].get<uint64_t>();
      q.checksum = p["checksum"].get<std::string>();
      m.pieces.push_back(std::move(q));
    }
    collect_rank_state(j["rank_state"], &m);
  }
  for (const auto& [name, t] : tensors) {
    ManifestTensor e;
    e.name = name;
    e.shape = t["shape"].get<std::vector<int64_t>>();
    e.logical_rows = t["logical_rows"].get<int64_t>();
    e.tp_dim = t["tp_dim"].get<int>();
    e.tp_groups = t["tp_groups"].get<int>();
    e.layer = t["layer"].get<int>();
    e.weight_decay = t["weight_decay"].get<bool>();
    m.tensors.push_back(std::move(e));
  }
  std::string text = manifest_to_text(m);
  auto check = parse_manifest(text, req.save_dir + "/" + req.tag + "/manifest.json");
  if (!check.ok()) return Status::Internal("checkpoint save produced an invalid manifest: " + check.status().message());
  return text;
}

// Temporary files of writes that a crash cut short ("<name>.tmp.<pid>").
void remove_torn_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path(), ec);
  }
}

// Deletes global_stepN directories older than the newest keep_last complete ones.
void remove_old_tags(const std::string& save_dir, int64_t current, int keep_last) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::map<int64_t, fs::path, std::greater<>> tags;
  for (const auto& e : fs::directory_iterator(save_dir, ec)) {
    const std::string n = e.path().filename().string();
    if (!e.is_directory() || n.rfind("global_step", 0) != 0) continue;
    char* end = nullptr;
    const long long step = std::strtoll(n.c_str() + 11, &end, 10);
    if (end == n.c_str() + 11 || *end != '\0' || step > current) continue;
    tags[step] = e.path();
  }
  int kept = 0;
  for (const auto& [step, path] : tags) {
    const bool complete = fs::exists(path / "manifest.json", ec);
    if (complete && kept < keep_last) {
      ++kept;
      continue;
    }
    fs::remove_all(path, ec);
  }
}

}  // namespace

Status save_whole_params(const ParamTable& table, const float* params, SaveRequest request) {
  RankStateView view;
  view.table = &table;
  view.arrays.push_back({"param", const_cast<float*>(params), {0, table.numel()}});  // only read
  view.save_range = {0, table.numel()};
  request.meta.kinds = {"param"};
  request.meta.engine.optimizer.clear();
  std::unique_ptr<ProcessGroup> self = make_single_process_group();
  return save_checkpoint(self.get(), view, request);
}

std::string step_tag(int64_t step) { return "global_step" + std::to_string(step); }

Status save_checkpoint(ProcessGroup* world, const RankStateView& view, const SaveRequest& req) {
  if (!valid_tag(req.tag)) return Status::InvalidArgument("checkpoint tag \"" + req.tag + "\" is not a plain directory name");
  if (const char* hook = std::getenv("ZT_TEST_ABORT_AFTER_BYTES"); hook != nullptr) {
    static bool armed = false;  // counts across every save of the process
    if (!armed) arm_torn_write_hook(std::atoll(hook));
    armed = true;
  }
  world->set_phase("checkpoint save");
  Status s = world->barrier()->wait();
  const std::string dir = req.save_dir + "/" + req.tag;
  std::string mine;
  if (s.ok()) {
    Status made = make_dirs(dir);
    auto shard = made.ok() ? write_rank_shard(view, req, world->rank()) : StatusOr<Json>(made);
    mine = shard.ok() ? shard->dump() : Json{{"error", shard.status().message()}}.dump();
  }
  std::string outcome;
  if (s.ok()) {
    auto parts = gather_bytes(world, mine, 0);
    s = parts.status();
    if (s.ok() && world->rank() == 0) {
      auto text = build_manifest(req, parts.value());
      Status w = text.status();
      if (w.ok()) w = write_file_atomic(dir + "/manifest.json", text.value());
      if (w.ok()) {
        const LatestPointer latest{req.tag, checksum_hex(text->data(), text->size())};
        w = write_file_atomic(req.save_dir + "/latest", latest_to_text(latest));
      }
      outcome = w.ok() ? "" : w.message();
    }
  }
  if (s.ok()) {
    auto b = broadcast_bytes(world, outcome, 0);
    s = b.ok() ? (b->empty() ? Status::OK() : Status::IOError("checkpoint " + dir + " not saved: " + b.value())) : b.status();
  }
  world->set_phase(nullptr);
  if (s.ok() && world->rank() == 0) {
    remove_torn_files(req.save_dir);
    remove_torn_files(dir);
    if (req.keep_last > 0) remove_old_tags(req.save_dir, req.meta.engine.global_step, req.keep_last);
  }
  return s;
}

}  // namespace zt
