// The calibration cache; see calibration.h.
#include "planner/calibration.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "io/atomic_file.h"
#include "io/filesystem.h"

namespace zt {

namespace {

constexpr const char* kFormat = "zerotrain-calibration/1";

Status bad(const std::string& file, const std::string& pointer, const std::string& what) {
  return Status::InvalidArgument(file + ": " + pointer + ": " + what);
}

StatusOr<double> number(const Json& j, const std::string& key, const std::string& file, const std::string& at,
                        double min) {
  if (!j.contains(key) || !j[key].is_number()) return bad(file, at + "/" + key, "expected a number");
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || v < min) return bad(file, at + "/" + key, "expected a finite number >= " + std::to_string(min));
  return v;
}

// The {op key: value > 0} object j[name] (seconds, or workspace bytes) into *out.
Status seconds_from_json(const Json& j, const char* name, const std::string& file, const std::string& at,
                         std::map<std::string, double>* out, const char* what = "seconds") {
  for (const auto& [key, v] : j[name].items()) {
    OpCall op;
    const std::string p = at + "/" + name + "/" + json_pointer_escape(key);
    if (!parse_op_key(key, &op)) return bad(file, p, "not a kernel call (\"linear_forward N C OC\", ...)");
    if (!v.is_number() || !(v.get<double>() > 0)) return bad(file, p, std::string("expected ") + what + " > 0");
    (*out)[key] = v.get<double>();
  }
  return Status::OK();
}

StatusOr<ComputeTable> table_from_json(const Json& j, const std::string& file, const std::string& at) {
  if (!j.is_object()) return bad(file, at, "expected an object");
  ComputeTable t;
  ZT_ASSIGN_OR_RETURN(const double threads, number(j, "threads", file, at, 1));
  ZT_ASSIGN_OR_RETURN(const double ranks, number(j, "concurrent_ranks", file, at, 1));
  t.threads = static_cast<int>(threads);
  t.concurrent_ranks = static_cast<int>(ranks);
  if (!j.contains("dtype") || !j["dtype"].is_string()) return bad(file, at + "/dtype", "expected \"fp32\", \"bf16\" or \"fp16\"");
  t.dtype = j["dtype"].get<std::string>();
  if (j.contains("device") && !j["device"].is_string()) return bad(file, at + "/device", "expected \"cpu\" or \"cuda\"");
  t.device = j.value("device", "cpu");
  if (t.device != "cpu" && t.device != "cuda") return bad(file, at + "/device", "expected \"cpu\" or \"cuda\", got \"" + t.device + "\"");
  if (t.dtype != "fp32" && t.dtype != "bf16" && t.dtype != "fp16") {
    return bad(file, at + "/dtype", "expected \"fp32\", \"bf16\" or \"fp16\", got \"" + t.dtype + "\"");
  }
  if (!j.contains("seconds") || !j["seconds"].is_object()) return bad(file, at + "/seconds", "expected an object");
  ZT_RETURN_IF_ERROR(seconds_from_json(j, "seconds", file, at, &t.seconds));
  if (j.contains("slowest_seconds")) {
    if (!j["slowest_seconds"].is_object()) return bad(file, at + "/slowest_seconds", "expected an object");
    ZT_RETURN_IF_ERROR(seconds_from_json(j, "slowest_seconds", file, at, &t.slowest_seconds));
  }
  if (j.contains("workspace_bytes")) {
    if (!j["workspace_bytes"].is_object()) return bad(file, at + "/workspace_bytes", "expected an object");
    ZT_RETURN_IF_ERROR(seconds_from_json(j, "workspace_bytes", file, at, &t.workspace_bytes, "bytes"));
  }
  return t;
}

// The [bytes, seconds] pairs under `key`, where present; malformed pairs are skipped.
void read_points(const Json& j, const char* key, std::vector<std::pair<double, double>>* out) {
  if (!j.contains(key) || !j[key].is_array()) return;
  for (const Json& p : j[key]) {
    if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) out->emplace_back(p[0], p[1]);
  }
}

StatusOr<CollectiveFit> fit_from_json(const Json& j, const std::string& file, const std::string& at) {
  if (!j.is_object()) return bad(file, at, "expected an object");
  CollectiveFit f;
  ZT_ASSIGN_OR_RETURN(f.alpha_s, number(j, "alpha_s", file, at, 0));
  ZT_ASSIGN_OR_RETURN(f.beta_s_per_byte, number(j, "beta_s_per_byte", file, at, 0));
  ZT_ASSIGN_OR_RETURN(const double ranks, number(j, "ranks", file, at, 2));
  f.ranks = static_cast<int>(ranks);
  if (j.contains("max_rel_residual") && j["max_rel_residual"].is_number()) f.max_rel_residual = j["max_rel_residual"];
  read_points(j, "points", &f.points);
  read_points(j, "validation_points", &f.validation_points);
  return f;
}

// The entry of `values` (op key -> value) for op's shape, else the same kernel's nearest
// shape by work (on equal distance the larger); null when that kernel has none. *work_out:
// the entry's work.
const std::pair<const std::string, double>* nearest_entry(const std::map<std::string, double>& values,
                                                          const OpCall& op, double* work_out) {
  if (auto it = values.find(op.key()); it != values.end()) {
    *work_out = op.work();
    return &*it;
  }
  const std::string prefix = std::string(op_kind_name(op.kind)) + " ";
  const double w = op.work();
  const std::pair<const std::string, double>* best_entry = nullptr;
  double best = std::numeric_limits<double>::infinity(), best_w = 0;
  for (auto it = values.lower_bound(prefix); it != values.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    OpCall m;
    if (!parse_op_key(it->first, &m)) continue;
    const double d = std::fabs(std::log(m.work() / w));
    if (d < best || (d == best && m.work() > best_w)) {
      best = d;
      best_w = m.work();
      best_entry = &*it;
    }
  }
  *work_out = best_w;
  return best_w > 0 ? best_entry : nullptr;
}

}  // namespace

bool ComputeTable::price(const OpCall& op, double* seconds_out, bool* exact, bool slowest_rank) const {
  const std::map<std::string, double>& seconds =
      slowest_rank && !slowest_seconds.empty() ? slowest_seconds : this->seconds;
  // Another shape's time is scaled by the work ratio; on a tie the larger shape (its rate
  // is the one a larger call approaches).
  double work = 0;
  const auto* e = nearest_entry(seconds, op, &work);
  if (e == nullptr) return false;
  *exact = e->first == op.key();
  *seconds_out = *exact ? e->second : e->second * op.work() / work;
  return true;
}

double ComputeTable::workspace(const OpCall& op) const {
  // Another shape's workspace as it is: a GEMM library's packing buffer does not grow with the work.
  double work = 0;
  const auto* e = nearest_entry(workspace_bytes, op, &work);
  return e == nullptr ? 0.0 : e->second;
}

const ComputeTable* Calibration::table(int threads, int ranks_on_host, const std::string& dtype,
                                       const std::string& device) const {
  auto nearer = [](int have, int best, int want) {  // -1 nearer, 0 as near, 1 farther
    const int d = std::abs(have - want), bd = std::abs(best - want);
    return d != bd ? (d < bd ? -1 : 1) : have > best ? -1 : have < best ? 1 : 0;
  };
  const ComputeTable* best = nullptr;
  for (const ComputeTable& t : compute) {
    if (t.dtype != dtype || t.device != device) continue;
    if (best == nullptr) {
      best = &t;
      continue;
    }
    const int by_threads = nearer(t.threads, best->threads, threads);
    if (by_threads < 0 || (by_threads == 0 && nearer(t.concurrent_ranks, best->concurrent_ranks, ranks_on_host) < 0)) {
      best = &t;
    }
  }
  return best;
}

void Calibration::put(const ComputeTable& t) {
  for (ComputeTable& have : compute) {
    if (have.threads == t.threads && have.concurrent_ranks == t.concurrent_ranks && have.dtype == t.dtype &&
        have.device == t.device) {
      for (const auto& [k, v] : t.seconds) have.seconds[k] = v;
      for (const auto& [k, v] : t.slowest_seconds) have.slowest_seconds[k] = v;
      for (const auto& [k, v] : t.workspace_bytes) have.workspace_bytes[k] = v;
      return;
    }
  }
  compute.push_back(t);
}

const CollectiveFit* Calibration::fit(const std::string& link, Collective c) const {
  auto l = links.find(link);
  if (l == links.end()) return nullptr;
  auto f = l->second.find(collective_name(c));
  return f == l->second.end() ? nullptr : &f->second;
}

const char* table_dtype(DType d) { return d == DType::kBF16 ? "bf16" : d == DType::kF16 ? "fp16" : "fp32"; }

std::string disk_key(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(dir, ec);
  if (ec) return dir;
  const std::filesystem::path c = std::filesystem::weakly_canonical(a, ec);
  std::string key = (ec ? a.lexically_normal() : c).string();
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

const DiskCalibration* Calibration::disk(const std::string& dir) const {
  const auto it = disks.find(disk_key(dir));
  return it == disks.end() ? nullptr : &it->second;
}

std::string default_calibration_path() {
  if (const char* p = std::getenv("ZT_CALIBRATION"); p != nullptr && *p != '\0') return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + "/zerotrain/calibration.json";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/zerotrain/calibration.json";
}

Json calibration_to_json(const Calibration& c) {
  Json j = {{"format", kFormat},
            {"machine", {{"cpu", c.cpu}, {"isa", c.isa}, {"gemm", c.gemm}, {"cores", c.cores}}},
            {"process_base_bytes", c.process_base_bytes},
            {"mpi_process_base_bytes", c.mpi_process_base_bytes},
            {"mpi_inter_process_base_bytes", c.mpi_inter_process_base_bytes}};
  j["compute"] = Json::array();
  for (const ComputeTable& t : c.compute) {
    j["compute"].push_back({{"threads", t.threads}, {"concurrent_ranks", t.concurrent_ranks}, {"dtype", t.dtype},
                            {"device", t.device}, {"seconds", t.seconds}});
    if (!t.slowest_seconds.empty()) j["compute"].back()["slowest_seconds"] = t.slowest_seconds;
    if (!t.workspace_bytes.empty()) j["compute"].back()["workspace_bytes"] = t.workspace_bytes;
  }
  j["links"] = Json::object();
  for (const auto& [link, ops] : c.links) {
    for (const auto& [name, f] : ops) {
      j["links"][link][name] = {{"alpha_s", f.alpha_s}, {"beta_s_per_byte", f.beta_s_per_byte}, {"ranks", f.ranks},
                                {"max_rel_residual", f.max_rel_residual}, {"points", f.points},
                                {"validation_points", f.validation_points}};
    }
  }
  for (const auto& [dir, d] : c.disks) {
    j["disks"][dir] = {{"write_bytes_per_s", d.write_bytes_per_s}, {"mixed_bytes_per_s", d.mixed_bytes_per_s},
                       {"checksum_bytes_per_s", d.checksum_bytes_per_s}, {"direct", d.direct}, {"io", d.io},
                       {"probe_bytes_per_array", d.probe_bytes_per_array}, {"probe_chunks", d.probe_chunks}};
  }
  if (!c.device_link.device.empty()) {
    j["device_link"] = {{"device", c.device_link.device}, {"h2d_bytes_per_s", c.device_link.h2d_bytes_per_s},
                        {"d2h_bytes_per_s", c.device_link.d2h_bytes_per_s}};
  }
  return j;
}

// The optional "device_link" object into *out.
static Status device_link_from_json(const Json& j, const std::string& file, DeviceLinkCalibration* out) {
  if (!j.contains("device_link")) return Status::OK();
  const Json& d = j["device_link"];
  if (!d.is_object() || !d.contains("device") || !d["device"].is_string()) {
    return bad(file, "/device_link/device", "expected the device's name");
  }
  out->device = d["device"].get<std::string>();
  ZT_ASSIGN_OR_RETURN(out->h2d_bytes_per_s, number(d, "h2d_bytes_per_s", file, "/device_link", 1));
  ZT_ASSIGN_OR_RETURN(out->d2h_bytes_per_s, number(d, "d2h_bytes_per_s", file, "/device_link", 1));
  return Status::OK();
}

// The optional "disks" object into *out.
static Status disks_from_json(const Json& j, const std::string& file, std::map<std::string, DiskCalibration>* out) {
  if (!j.contains("disks")) return Status::OK();
  if (!j["disks"].is_object()) return bad(file, "/disks", "expected an object of swap directories");
  for (const auto& [dir, d] : j["disks"].items()) {
    const std::string at = "/disks/" + json_pointer_escape(dir);
    if (!d.is_object()) return bad(file, at, "expected an object");
    DiskCalibration r;
    ZT_ASSIGN_OR_RETURN(r.write_bytes_per_s, number(d, "write_bytes_per_s", file, at, 1));
    ZT_ASSIGN_OR_RETURN(r.mixed_bytes_per_s, number(d, "mixed_bytes_per_s", file, at, 1));
    ZT_ASSIGN_OR_RETURN(r.checksum_bytes_per_s, number(d, "checksum_bytes_per_s", file, at, 1));
    if (!d.contains("direct") || !d["direct"].is_boolean()) return bad(file, at + "/direct", "expected true or false");
    r.direct = d["direct"].get<bool>();
    if (d.contains("io") && !d["io"].is_string()) return bad(file, at + "/io", "expected the I/O engine's mode");
    r.io = d.value("io", "");
    if (d.contains("probe_bytes_per_array")) {
      ZT_ASSIGN_OR_RETURN(r.probe_bytes_per_array, number(d, "probe_bytes_per_array", file, at, 0));
    }
    if (d.contains("probe_chunks")) {
      ZT_ASSIGN_OR_RETURN(const double chunks, number(d, "probe_chunks", file, at, 0));
      r.probe_chunks = static_cast<size_t>(chunks);
    }
    (*out)[dir] = r;
  }
  return Status::OK();
}

StatusOr<Calibration> calibration_from_json(const Json& j, const std::string& file) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    return bad(file, "/format", std::string("expected \"") + kFormat + "\" (a file written by zerotrain calibrate)");
  }
  Calibration c;
  if (j.contains("machine") && j["machine"].is_object()) {
    const Json& m = j["machine"];
    c.cpu = m.value("cpu", "");
    c.isa = m.value("isa", "");
    c.gemm = m.value("gemm", "");
    c.cores = m.value("cores", 0);
  }
  ZT_ASSIGN_OR_RETURN(c.process_base_bytes, number(j, "process_base_bytes", file, "", 0));
  ZT_ASSIGN_OR_RETURN(c.mpi_process_base_bytes, number(j, "mpi_process_base_bytes", file, "", 0));
  ZT_ASSIGN_OR_RETURN(c.mpi_inter_process_base_bytes, number(j, "mpi_inter_process_base_bytes", file, "", 0));
  if (!j.contains("compute") || !j["compute"].is_array()) return bad(file, "/compute", "expected an array");
  for (size_t i = 0; i < j["compute"].size(); ++i) {
    ZT_ASSIGN_OR_RETURN(ComputeTable t, table_from_json(j["compute"][i], file, "/compute/" + std::to_string(i)));
    c.compute.push_back(std::move(t));
  }
  if (!j.contains("links") || !j["links"].is_object()) return bad(file, "/links", "expected an object");
  for (const auto& [link, ops] : j["links"].items()) {
    const std::string at = "/links/" + json_pointer_escape(link);
    if (link != "intra" && link != "inter") return bad(file, at, "expected \"intra\" or \"inter\"");
    if (!ops.is_object()) return bad(file, at, "expected an object");
    for (const auto& [name, f] : ops.items()) {
      Collective kind;
      if (!parse_collective(name, &kind)) {
        return bad(file, at + "/" + json_pointer_escape(name), "expected all_reduce, reduce_scatter, all_gather or p2p");
      }
      ZT_ASSIGN_OR_RETURN(c.links[link][name], fit_from_json(f, file, at + "/" + name));
    }
  }
  ZT_RETURN_IF_ERROR(device_link_from_json(j, file, &c.device_link));
  ZT_RETURN_IF_ERROR(disks_from_json(j, file, &c.disks));
  return c;
}

StatusOr<Calibration> load_calibration(const std::string& path) {
  auto text = read_file(path, 64u << 20);
  if (!text.ok()) {
    return Status::NotFound(path + ": no calibration (" + text.status().message() +
                            "); run `zerotrain calibrate` on this machine first");
  }
  ZT_ASSIGN_OR_RETURN(const Json j, parse_json_strict(*text, path));
  return calibration_from_json(j, path);
}

Status save_calibration(const std::string& path, const Calibration& c) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) ZT_RETURN_IF_ERROR(make_dirs(path.substr(0, slash)));
  return write_file_atomic(path, calibration_to_json(c).dump(1) + "\n");
}

}  // namespace zt
