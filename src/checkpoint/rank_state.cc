// Rank state in checkpoints; see rank_state.h.
#include "checkpoint/rank_state.h"

#include <cstring>
#include <map>

#include "io/checksum.h"

namespace zt {

namespace {

size_t bytes_of(const RankArray& a) { return a.numel * (a.f64 ? sizeof(double) : sizeof(float)); }

// The saved array is in its shard, of its size, with its checksum.
Status check_array(const SafetensorsFile& shard, const ManifestRankState& s, size_t bytes) {
  const std::string path = shard.label();
  auto it = shard.entries().find(s.entry());
  if (it == shard.entries().end() || it->second.end - it->second.begin != bytes) {
    return Status::Corruption(path + ": " + s.entry() + " is missing or not " + std::to_string(bytes) + " bytes");
  }
  const std::string got = checksum_hex(shard.data(s.entry()), bytes);
  if (got != s.checksum) {
    return Status::Corruption(path + ": " + s.entry() + ": checksum mismatch: expected " + s.checksum + ", actual " + got);
  }
  return Status::OK();
}

}  // namespace

Json add_rank_state(const std::vector<RankArray>& arrays, const std::string& file, int rank,
                    std::vector<TensorToWrite>* tensors) {
  Json out = Json::array();
  for (const RankArray& a : arrays) {
    const ManifestRankState d{rank, a.name, file, a.f64 ? "F64" : "F32", a.numel, checksum_hex(a.data, bytes_of(a))};
    tensors->push_back({d.entry(), a.f64 ? StDType::kF64 : StDType::kF32, {static_cast<int64_t>(a.numel)}, a.data});
    out.push_back({{"rank", d.rank}, {"name", d.name}, {"file", d.file}, {"dtype", d.dtype}, {"numel", d.numel},
                   {"checksum", d.checksum}});
  }
  return out;
}

void collect_rank_state(const Json& described, Manifest* m) {
  for (const Json& d : described) {
    m->rank_states.push_back({d["rank"].get<int>(), d["name"].get<std::string>(), d["file"].get<std::string>(),
                              d["dtype"].get<std::string>(), d["numel"].get<uint64_t>(), d["checksum"].get<std::string>()});
  }
}

bool rank_state_fits(const Manifest& m, const CheckpointLayout& now) {
  const CheckpointLayout& l = m.layout;
  return !m.rank_states.empty() && l.world == now.world && l.dp == now.dp && l.pp == now.pp && l.tp == now.tp &&
         l.zero_stage == now.zero_stage && l.ep == now.ep;
}

Status load_rank_state(const CheckpointRef& ckpt, int rank, const std::vector<RankArray>& arrays) {
  std::vector<const ManifestRankState*> saved;
  for (const ManifestRankState& s : ckpt.manifest.rank_states) {
    if (s.rank == rank) saved.push_back(&s);
  }
  const std::string where = "checkpoint " + ckpt.dir + ": rank " + std::to_string(rank) + "'s state";
  if (saved.size() != arrays.size()) {
    return Status::InvalidArgument(where + " has " + std::to_string(saved.size()) + " arrays, this optimizer keeps " +
                                   std::to_string(arrays.size()));
  }
  std::map<std::string, SafetensorsFile> shards;  // verified whole before any array is written
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ManifestRankState& s = *saved[i];
    const RankArray& a = arrays[i];
    if (s.name != a.name || s.numel != a.numel || s.dtype != (a.f64 ? "F64" : "F32")) {
      return Status::InvalidArgument(where + " " + s.name + " (" + s.dtype + ", " + std::to_string(s.numel) +
                                     ") does not fit this optimizer's " + a.name + " (" + std::to_string(a.numel) + ")");
    }
    if (shards.count(s.file) == 0) {
      ZT_ASSIGN_OR_RETURN(SafetensorsFile shard, read_verified_shard(ckpt, *ckpt.manifest.file(s.file)));
      shards.emplace(s.file, std::move(shard));
    }
    ZT_RETURN_IF_ERROR(check_array(shards.at(s.file), s, bytes_of(a)));
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::memcpy(arrays[i].data, shards.at(saved[i]->file).data(saved[i]->entry()), bytes_of(arrays[i]));
  }
  return Status::OK();
}

}  // namespace zt
