// Manifest JSON: writing, strict parsing, and the structural checks (coverage, names).
#include "checkpoint/manifest.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "checkpoint/model_json.h"
#include "checkpoint/state_view.h"
#include "io/checksum.h"
#include "io/json_reader.h"

namespace zt {

namespace {

constexpr int64_t kMaxInt = (int64_t{1} << 62);
constexpr const char* kFormat = "zerotrain-checkpoint";

Json tensor_json(const ManifestTensor& t) {
  return {{"name", t.name},     {"shape", t.shape},   {"logical_rows", t.logical_rows}, {"tp_dim", t.tp_dim},
          {"tp_groups", t.tp_groups}, {"layer", t.layer}, {"weight_decay", t.weight_decay}};
}

Json loss_scaler_json(const EngineState& e) {
  if (e.loss_scaler == "none") return {{"type", "none"}, {"why", e.precision + " training has no loss scale"}};
  const LossScalerState& s = e.scaler;
  return {{"type", e.loss_scaler},         {"cur_scale", s.scale},
          {"cur_iter", s.iteration},       {"last_overflow_iter", s.last_overflow},
          {"cur_hysteresis", s.hysteresis_left}};
}

Json body_json(const Manifest& m) {
  Json j;
  j["format"] = kFormat;
  j["format_version"] = kCheckpointFormatVersion;
  j["zerotrain_version"] = m.zerotrain_version;
  j["tag"] = m.tag;
  j["model"] = manifest_model_json(m.model);
  const CheckpointLayout& l = m.layout;
  j["layout"] = {{"world", l.world}, {"dp", l.dp}, {"pp", l.pp}, {"tp", l.tp}, {"zero_stage", l.zero_stage}};
  if (l.ep > 1) j["layout"]["ep"] = l.ep;
  const EngineState& e = m.engine;
  j["engine"] = {{"global_step", e.global_step},
                 {"global_samples", e.global_step * e.train_batch_size},
                 {"optimizer", {{"type", e.optimizer}, {"step_count", e.optimizer_steps}}},
                 {"lr_scheduler", {{"type", e.lr_schedule}, {"last_batch_iteration", e.global_step - 1}, {"next_lr", e.next_lr}}},
                 {"precision", e.precision},
                 {"loss_scaler", loss_scaler_json(e)},
                 {"data_sampler", {{"seed", e.seed}, {"train_batch_size", e.train_batch_size}, {"next_batch", e.global_step}}},
                 {"rng", {{"seed", e.seed}, {"why", "training draws no random numbers after initialisation (no dropout)"}}},
                 {"isa", e.isa},
                 {"threads_per_rank", e.threads_per_rank}};
  if (!e.schedules.empty()) j["engine"]["schedules"] = e.schedules;
  j["config"] = m.config;
  j["state_kinds"] = m.kinds;
  Json tensors = Json::array();
  for (const ManifestTensor& t : m.tensors) tensors.push_back(tensor_json(t));
  j["tensors"] = tensors;
  Json files = Json::array();
  for (const ManifestFile& f : m.files) {
    files.push_back({{"name", f.name}, {"rank", f.rank}, {"bytes", f.bytes}, {"checksum", f.checksum}});
  }
  j["files"] = files;
  Json pieces = Json::array();
  for (const ManifestPiece& p : m.pieces) {
    pieces.push_back({{"tensor", p.tensor}, {"kind", p.kind}, {"file", p.file}, {"tp_rank", p.tp_rank},
                      {"tp_size", p.tp_size}, {"begin", p.begin}, {"end", p.end}, {"checksum", p.checksum}});
  }
  j["pieces"] = pieces;
  if (!m.rank_states.empty()) {
    Json states = Json::array();
    for (const ManifestRankState& r : m.rank_states) {
      states.push_back({{"rank", r.rank}, {"name", r.name}, {"file", r.file}, {"dtype", r.dtype}, {"numel", r.numel},
                        {"checksum", r.checksum}});
    }
    j["rank_state"] = states;
  }
  return j;
}

// Reads a required key; absent keys are errors (JsonReader's getters take defaults).
int64_t need_int(JsonReader& r, const std::string& key, int64_t lo, int64_t hi) {
  if (!r.has(key)) r.fail(key, "is missing");
  return r.integer(key, lo, lo, hi);
}
std::string need_string(JsonReader& r, const std::string& key) {
  if (!r.has(key)) r.fail(key, "is missing");
  return r.string(key, "");
}
const Json* need_array(JsonReader& r, const std::string& key) {
  const Json* v = r.raw(key);
  if (v == nullptr || !v->is_array()) {
    r.fail(key, v == nullptr ? "is missing" : "expected an array, got " + json_brief(*v));
    return nullptr;
  }
  return v;
}
// Each element of an array of objects, as a reader at ".../key/i".
template <typename Fn>
void each_object(JsonReader& r, const std::string& key, Fn fn) {
  const Json* arr = need_array(r, key);
  if (arr == nullptr) return;
  for (size_t i = 0; i < arr->size() && r.status().ok(); ++i) {
    const std::string where = r.path(key) + "/" + std::to_string(i);
    if (!(*arr)[i].is_object()) {
      r.fail(key + "/" + std::to_string(i), "expected an object, got " + json_brief((*arr)[i]));
      return;
    }
    JsonReader e = r.nested((*arr)[i], where);
    fn(e);
    e.done();
  }
}

bool plain_file_name(const std::string& s) {
  if (s.empty() || s.size() > 255 || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

void read_layout(JsonReader& root, CheckpointLayout* l) {
  auto r = root.object_or_empty("layout");
  l->world = static_cast<int>(need_int(r, "world", 1, 1 << 20));
  l->dp = static_cast<int>(need_int(r, "dp", 1, 1 << 20));
  l->pp = static_cast<int>(need_int(r, "pp", 1, 1 << 20));
  l->tp = static_cast<int>(need_int(r, "tp", 1, 1 << 20));
  l->zero_stage = static_cast<int>(need_int(r, "zero_stage", 0, 3));
  l->ep = r.has("ep") ? static_cast<int>(need_int(r, "ep", 1, l->dp)) : 1;
  const int64_t product = static_cast<int64_t>(l->dp) * l->pp * l->tp;  // each up to 2^20: no overflow
  if (r.status().ok() && product != l->world) {
    r.fail("world", "is " + std::to_string(l->world) + " but dp x pp x tp = " + std::to_string(product));
  }
  r.done();
}

void read_engine(JsonReader& root, EngineState* e) {
  auto r = root.object_or_empty("engine");
  e->global_step = need_int(r, "global_step", 0, kMaxInt);
  const int64_t samples = need_int(r, "global_samples", 0, kMaxInt);
  auto opt = r.object_or_empty("optimizer");
  e->optimizer = opt.choice("type", "", {"adamw", "sgd", "lamb", "onebitadam", "zerooneadam", "onebitlamb", ""});
  e->optimizer_steps = need_int(opt, "step_count", 0, kMaxInt);
  opt.done();
  auto lr = r.object_or_empty("lr_scheduler");
  e->lr_schedule = need_string(lr, "type");
  need_int(lr, "last_batch_iteration", -1, kMaxInt);
  e->next_lr = lr.number("next_lr", 0.0, 0.0, 1e9);
  lr.done();
  e->precision = r.choice("precision", "fp32", {"fp32", "bf16", "fp16"});
  auto ls = r.object_or_empty("loss_scaler");
  e->loss_scaler = ls.choice("type", "none", {"none", "dynamic", "static"});
  if (e->loss_scaler == "none") {
    ls.string("why", "");
  } else {
    e->scaler.scale = ls.number("cur_scale", 1.0, 0.0, 1e300);
    e->scaler.iteration = need_int(ls, "cur_iter", 0, kMaxInt);
    e->scaler.last_overflow = need_int(ls, "last_overflow_iter", -1, kMaxInt);
    e->scaler.hysteresis_left = static_cast<int>(need_int(ls, "cur_hysteresis", 0, kMaxInt));
  }
  ls.done();
  auto ds = r.object_or_empty("data_sampler");
  e->seed = static_cast<uint64_t>(need_int(ds, "seed", 0, kMaxInt));
  e->train_batch_size = need_int(ds, "train_batch_size", 0, kMaxInt);
  need_int(ds, "next_batch", 0, kMaxInt);
  ds.done();
  // The writer derives global_samples; checking it also bounds the product it computes.
  int64_t product = 0;
  if (r.status().ok() &&
      (__builtin_mul_overflow(e->global_step, e->train_batch_size, &product) || product != samples)) {
    r.fail("global_samples", std::to_string(samples) + " is not global_step " + std::to_string(e->global_step) +
                                 " x data_sampler/train_batch_size " + std::to_string(e->train_batch_size));
  }
  if (const Json* sched = r.raw("schedules"); sched != nullptr) {
    if (sched->is_object()) {
      e->schedules = *sched;
    } else {
      r.fail("schedules", "expected an object, got " + json_brief(*sched));
    }
  }
  auto rng = r.object_or_empty("rng");
  need_int(rng, "seed", 0, kMaxInt);
  rng.string("why", "");
  rng.done();
  e->isa = r.string("isa", "");
  e->threads_per_rank = static_cast<int>(need_int(r, "threads_per_rank", 0, 1 << 20));
  r.done();
}

// Names seen so far while parsing, so that every lookup is O(1) even in a crafted
// manifest with millions of entries.
struct ParseIndex {
  std::unordered_map<std::string, size_t> tensors;  // name -> index in Manifest::tensors
  std::unordered_set<std::string> files;
};

void read_tensor(JsonReader& r, Manifest* m, ParseIndex* index) {
  ManifestTensor t;
  t.name = need_string(r, "name");
  const Json* shape = need_array(r, "shape");
  if (shape != nullptr) {
    // Saturated at 2^40 + 1 after every factor: four factors of 2^40 would wrap 128 bits.
    constexpr unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 40;
    unsigned __int128 n = 1;
    for (const Json& d : *shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40)) {
        r.fail("shape", "expected non-negative dimensions below 2^40, got " + json_brief(*shape));
        break;
      }
      t.shape.push_back(d.get<int64_t>());
      n = std::min(n * d.get<uint64_t>(), kLimit + 1);
    }
    if (t.shape.empty() || t.shape.size() > 4) r.fail("shape", "expected 1 to 4 dimensions, got " + json_brief(*shape));
    if (n > kLimit) r.fail("shape", "has more than 2^40 elements: " + json_brief(*shape));
  }
  const int64_t rows = t.shape.empty() ? 0 : t.shape[0];
  t.logical_rows = need_int(r, "logical_rows", -1, rows);
  t.tp_dim = static_cast<int>(need_int(r, "tp_dim", -1, std::max<int64_t>(0, static_cast<int64_t>(t.shape.size()) - 1)));
  t.tp_groups = static_cast<int>(need_int(r, "tp_groups", 1, 16));
  t.layer = static_cast<int>(need_int(r, "layer", -1, 1 << 20));
  t.weight_decay = r.boolean("weight_decay", false);
  if (r.status().ok() && !index->tensors.emplace(t.name, m->tensors.size()).second) {
    r.fail("name", "duplicate tensor " + t.name);
  }
  if (r.status().ok() && t.tp_dim >= 0 && t.shape[static_cast<size_t>(t.tp_dim)] % t.tp_groups != 0) {
    r.fail("tp_groups", std::to_string(t.tp_groups) + " does not divide dimension " + std::to_string(t.tp_dim));
  }
  m->tensors.push_back(std::move(t));
}

void read_file_entry(JsonReader& r, Manifest* m, ParseIndex* index) {
  ManifestFile f;
  f.name = need_string(r, "name");
  f.rank = static_cast<int>(need_int(r, "rank", 0, m->layout.world - 1));
  f.bytes = static_cast<uint64_t>(need_int(r, "bytes", 0, kMaxInt));
  f.checksum = need_string(r, "checksum");
  if (r.status().ok() && !plain_file_name(f.name)) {
    r.fail("name", "\"" + f.name + "\" is not a plain file name inside the checkpoint directory");
  }
  if (r.status().ok() && !is_checksum_hex(f.checksum)) r.fail("checksum", "expected 16 hex digits, got " + f.checksum);
  if (r.status().ok() && !index->files.insert(f.name).second) r.fail("name", "duplicate file " + f.name);
  m->files.push_back(std::move(f));
}

void read_piece(JsonReader& r, Manifest* m, const ParseIndex& index) {
  ManifestPiece p;
  p.tensor = need_string(r, "tensor");
  p.kind = need_string(r, "kind");
  p.file = need_string(r, "file");
  p.tp_size = static_cast<int>(need_int(r, "tp_size", 1, 1 << 20));
  p.tp_rank = static_cast<int>(need_int(r, "tp_rank", 0, p.tp_size - 1));
  p.begin = static_cast<uint64_t>(need_int(r, "begin", 0, kMaxInt));
  p.end = static_cast<uint64_t>(need_int(r, "end", 0, kMaxInt));
  p.checksum = need_string(r, "checksum");
  if (!r.status().ok()) return;
  auto found = index.tensors.find(p.tensor);
  if (found == index.tensors.end()) return r.fail("tensor", "names no tensor of the table: " + p.tensor);
  const ManifestTensor* t = &m->tensors[found->second];
  if (!m->has_kind(p.kind)) return r.fail("kind", "\"" + p.kind + "\" is not in state_kinds");
  if (index.files.count(p.file) == 0) return r.fail("file", "names no file of the file list: " + p.file);
  if (!is_checksum_hex(p.checksum)) return r.fail("checksum", "expected 16 hex digits, got " + p.checksum);
  if (t->tp_dim < 0 && p.tp_size != 1) return r.fail("tp_size", "must be 1 for a tensor no tp layout cuts");
  if (t->tp_dim >= 0 && t->shape[static_cast<size_t>(t->tp_dim)] % (static_cast<int64_t>(t->tp_groups) * p.tp_size) != 0) {
    return r.fail("tp_size", std::to_string(p.tp_size) + " does not divide dimension " + std::to_string(t->tp_dim) +
                                 " of " + p.tensor + " into equal slices");
  }
  const uint64_t slice = t->numel() / static_cast<uint64_t>(p.tp_size);
  if (p.begin >= p.end || p.end > slice) {
    return r.fail("end", "[" + std::to_string(p.begin) + ", " + std::to_string(p.end) + ") is not a non-empty range of the " +
                             std::to_string(slice) + "-element slice of " + p.tensor);
  }
  m->pieces.push_back(std::move(p));
}

void read_rank_state(JsonReader& r, Manifest* m, const ParseIndex& index) {
  ManifestRankState a;
  a.rank = static_cast<int>(need_int(r, "rank", 0, m->layout.world - 1));
  a.name = need_string(r, "name");
  a.file = need_string(r, "file");
  a.dtype = need_string(r, "dtype");
  a.numel = static_cast<uint64_t>(need_int(r, "numel", 0, int64_t{1} << 40));
  a.checksum = need_string(r, "checksum");
  if (!r.status().ok()) return;
  if (a.dtype != "F32" && a.dtype != "F64") return r.fail("dtype", "expected \"F32\" or \"F64\", got \"" + a.dtype + "\"");
  if (index.files.count(a.file) == 0) return r.fail("file", "names no file of the file list: " + a.file);
  if (!is_checksum_hex(a.checksum)) return r.fail("checksum", "expected 16 hex digits, got " + a.checksum);
  for (const ManifestRankState& b : m->rank_states) {
    if (b.rank == a.rank && b.name == a.name) return r.fail("name", "duplicate rank state " + a.name + " of rank " + std::to_string(a.rank));
  }
  m->rank_states.push_back(std::move(a));
}

// Every (tensor, kind) is tiled exactly: one tp size, and per tp rank ranges that
// start at 0, touch and end at the slice size.
Status check_coverage(const Manifest& m, const std::string& label) {
  std::map<std::pair<std::string, std::string>, std::vector<const ManifestPiece*>> groups;
  for (const ManifestPiece& p : m.pieces) groups[{p.tensor, p.kind}].push_back(&p);
  for (const ManifestTensor& t : m.tensors) {
    for (const std::string& kind : m.kinds) {
      auto it = groups.find({t.name, kind});
      const std::string what = label + ": " + kind + " of tensor " + t.name;
      if (it == groups.end()) return Status::Corruption(what + " has no pieces");
      std::vector<const ManifestPiece*>& ps = it->second;
      std::sort(ps.begin(), ps.end(), [](const auto* a, const auto* b) {
        return std::tie(a->tp_rank, a->begin) < std::tie(b->tp_rank, b->begin);
      });
      const int P = ps[0]->tp_size;
      const uint64_t slice = t.numel() / static_cast<uint64_t>(P);
      int rank = 0;
      uint64_t cursor = 0;
      for (const ManifestPiece* p : ps) {
        if (p->tp_size != P) return Status::Corruption(what + ": pieces disagree on the tp size");
        if (p->tp_rank != rank) {
          if (p->tp_rank != rank + 1 || cursor != slice) break;
          ++rank;
          cursor = 0;
        }
        if (p->begin != cursor) {
          return Status::Corruption(what + ": slice " + std::to_string(rank) + " has " +
                                    (p->begin > cursor ? "a hole" : "an overlap") + " at element " + std::to_string(cursor));
        }
        cursor = p->end;
      }
      if (rank != P - 1 || cursor != slice) {
        if (cursor == slice) {  // slice `rank` is whole: the next one is missing
          return Status::Corruption(what + ": slice " + std::to_string(rank + 1) + " (of tp size " + std::to_string(P) +
                                    ") has no pieces");
        }
        return Status::Corruption(what + ": the pieces do not cover every element (slice " + std::to_string(rank) +
                                  " ends at " + std::to_string(cursor) + " of " + std::to_string(slice) + ")");
      }
    }
  }
  return Status::OK();
}

// state_kinds: distinct names from state_kinds(), "param" first.
void read_kinds(JsonReader& r, Manifest* m) {
  const Json* kinds = need_array(r, "state_kinds");
  if (kinds == nullptr) return;
  const std::vector<std::string>& known = state_kinds();
  for (const Json& k : *kinds) {
    if (!k.is_string() || std::find(known.begin(), known.end(), k.get<std::string>()) == known.end() ||
        std::count(kinds->begin(), kinds->end(), k) != 1) {
      std::string names;
      for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
      return r.fail("state_kinds", "expected distinct kinds among " + names + ", got " + kinds->dump());
    }
    m->kinds.push_back(k.get<std::string>());
  }
  if (r.status().ok() && (m->kinds.empty() || m->kinds[0] != "param")) r.fail("state_kinds", "must start with \"param\"");
}

}  // namespace

size_t ManifestTensor::numel() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

const ManifestTensor* Manifest::tensor(const std::string& name) const {
  for (const ManifestTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const ManifestFile* Manifest::file(const std::string& name) const {
  for (const ManifestFile& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool Manifest::has_kind(const std::string& kind) const { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); }

bool is_checksum_hex(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string manifest_to_text(const Manifest& m) {
  Json j = body_json(m);
  j["checksum"] = checksum_hex(j.dump().data(), j.dump().size());
  return j.dump(1) + "\n";
}

StatusOr<Manifest> parse_manifest(const std::string& text, const std::string& label) {
  if (text.size() > kMaxManifestBytes) {
    return Status::Corruption(label + ": " + std::to_string(text.size()) + " bytes, over the manifest limit of " +
                              std::to_string(kMaxManifestBytes));
  }
  auto parsed = parse_json_strict(text, label);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  Json j = std::move(parsed).value();
  if (!j.is_object()) return Status::Corruption(label + ": not a JSON object");
  auto sum = j.find("checksum");
  if (sum == j.end() || !sum->is_string()) return Status::Corruption(label + ": /checksum is missing");
  const std::string expected = sum->get<std::string>();
  j.erase("checksum");
  const std::string body = j.dump();
  const std::string actual = checksum_hex(body.data(), body.size());
  if (expected != actual) {
    return Status::Corruption(label + ": checksum mismatch: expected " + expected + ", actual " + actual +
                              " (the manifest was modified or damaged)");
  }
  Manifest m;
  JsonReader r(j, "");
  if (need_string(r, "format") != kFormat && r.status().ok()) r.fail("format", "expected \"" + std::string(kFormat) + "\"");
  const int64_t version = need_int(r, "format_version", 0, 1 << 20);
  if (r.status().ok() && version != kCheckpointFormatVersion) {
    r.fail("format_version", std::to_string(version) + " is not supported; this zerotrain reads version " +
                                 std::to_string(kCheckpointFormatVersion));
  }
  m.zerotrain_version = need_string(r, "zerotrain_version");
  m.tag = need_string(r, "tag");
  JsonReader model = r.object_or_empty("model");
  read_manifest_model(model, &m.model);
  model.done();
  read_layout(r, &m.layout);
  read_engine(r, &m.engine);
  if (const Json* c = r.raw("config"); c != nullptr && c->is_object()) {
    m.config = *c;
  } else {
    r.fail("config", "expected an object");
  }
  read_kinds(r, &m);
  ParseIndex index;
  each_object(r, "tensors", [&](JsonReader& e) { read_tensor(e, &m, &index); });
  each_object(r, "files", [&](JsonReader& e) { read_file_entry(e, &m, &index); });
  each_object(r, "pieces", [&](JsonReader& e) { read_piece(e, &m, index); });
  if (r.has("rank_state")) each_object(r, "rank_state", [&](JsonReader& e) { read_rank_state(e, &m, index); });
  Status s = r.finish();
  if (!s.ok()) return Status::Corruption(label + ": " + s.message());
  ZT_RETURN_IF_ERROR(check_coverage(m, label));
  return m;
}

}  // namespace zt
