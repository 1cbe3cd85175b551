// JsonReader: the checks and the messages.
#include "io/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>

namespace zt {

std::string json_brief(const Json& value) {
  std::string s = value.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

namespace {

std::string range_text(int64_t lo, int64_t hi) {
  if (lo == INT64_MIN && hi == INT64_MAX) return "an integer";
  if (hi == INT64_MAX) return "an integer >= " + std::to_string(lo);
  if (lo == INT64_MIN) return "an integer <= " + std::to_string(hi);
  return "an integer " + std::to_string(lo) + ".." + std::to_string(hi);
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

namespace {
thread_local std::vector<KeyLogEntry>* g_key_log = nullptr;
}  // namespace

ScopedKeyLog::ScopedKeyLog(std::vector<KeyLogEntry>* out) : previous_(g_key_log) { g_key_log = out; }
ScopedKeyLog::~ScopedKeyLog() { g_key_log = previous_; }

void JsonReader::log(const std::string& key, std::string expects, std::string dflt) const {
  if (g_key_log != nullptr) g_key_log->push_back({path(key), std::move(expects), std::move(dflt)});
}

JsonReader::JsonReader(const Json& obj, std::string pointer)
    : JsonReader(obj, std::move(pointer), std::make_shared<Status>()) {}

JsonReader::JsonReader(const Json& obj, std::string pointer, std::shared_ptr<Status> error)
    : obj_(&obj), pointer_(std::move(pointer)), error_(std::move(error)) {}

const Json* JsonReader::lookup(const std::string& key) {
  known_.insert(key);
  auto it = obj_->find(key);
  if (it == obj_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonReader::has(const std::string& key) {
  log(key, "a value checked by its section reader", "");
  return lookup(key) != nullptr;
}

const Json* JsonReader::raw(const std::string& key) {
  log(key, "a value checked by its section reader", "");
  return lookup(key);
}

void JsonReader::fail(const std::string& key, const std::string& why) {
  if (error_->ok()) *error_ = Status::InvalidArgument(path(key) + ": " + why);
}

int64_t JsonReader::integer(const std::string& key, int64_t dflt, int64_t lo, int64_t hi) {
  log(key, range_text(lo, hi), std::to_string(dflt));
  const Json* v = lookup(key);
  if (v == nullptr) return dflt;
  int64_t x = 0;
  bool ok = false;
  // Unsigned first: nlohmann's is_number_integer() is also true for unsigned values, and
  // get<int64_t>() would wrap 2^64 - 1 to -1.
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    ok = u <= static_cast<uint64_t>(INT64_MAX);
    x = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
    ok = true;
  } else if (v->is_number_float()) {  // DeepSpeed configs write 5e8 for bucket sizes
    const double d = v->get<double>();
    ok = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18;
    if (ok) x = static_cast<int64_t>(d);  // out of range, the conversion is undefined
  }
  if (!ok || x < lo || x > hi) {
    fail(key, "expected " + range_text(lo, hi) + ", got " + json_brief(*v));
    return dflt;
  }
  return x;
}

double JsonReader::number(const std::string& key, double dflt, double lo, double hi) {
  std::string want = "a number";
  if (std::isfinite(lo) && std::isfinite(hi)) {
    want += " in [" + number_text(lo) + ", " + number_text(hi) + "]";
  } else if (std::isfinite(lo)) {
    want += " >= " + number_text(lo);
  } else if (std::isfinite(hi)) {
    want += " <= " + number_text(hi);
  }
  log(key, want, std::isnan(dflt) ? "none" : number_text(dflt));
  const Json* v = lookup(key);
  if (v == nullptr) return dflt;
  if (!v->is_number() || v->get<double>() < lo || v->get<double>() > hi || !std::isfinite(v->get<double>())) {
    fail(key, "expected " + want + ", got " + json_brief(*v));
    return dflt;
  }
  return v->get<double>();
}

bool JsonReader::boolean(const std::string& key, bool dflt) {
  log(key, "true or false", dflt ? "true" : "false");
  const Json* v = lookup(key);
  if (v == nullptr) return dflt;
  if (!v->is_boolean()) {
    fail(key, "expected true or false, got " + json_brief(*v));
    return dflt;
  }
  return v->get<bool>();
}

std::string JsonReader::string(const std::string& key, const std::string& dflt) {
  log(key, "a string", Json(dflt).dump());
  const Json* v = lookup(key);
  if (v == nullptr) return dflt;
  if (!v->is_string()) {
    fail(key, "expected a string, got " + json_brief(*v));
    return dflt;
  }
  return v->get<std::string>();
}

std::string JsonReader::choice(const std::string& key, const std::string& dflt,
                               std::initializer_list<const char*> allowed, bool case_insensitive) {
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  log(key, "one of " + list, dflt.empty() ? "" : Json(dflt).dump());
  const Json* v = lookup(key);
  if (v == nullptr) return dflt;
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    for (const char* a : allowed) {
      if (s == a || (case_insensitive && lower(s) == lower(a))) return a;
    }
  }
  fail(key, "expected one of " + list + ", got " + json_brief(*v));
  return dflt;
}

std::vector<std::string> JsonReader::strings(const std::string& key) {
  log(key, "a string or an array of strings", "");
  const Json* v = lookup(key);
  if (v == nullptr) return {};
  std::vector<std::string> out;
  if (v->is_string()) return {v->get<std::string>()};
  if (v->is_array() && std::all_of(v->begin(), v->end(), [](const Json& e) { return e.is_string(); })) {
    for (const Json& e : *v) out.push_back(e.get<std::string>());
    return out;
  }
  fail(key, "expected a string or an array of strings, got " + json_brief(*v));
  return {};
}

std::optional<JsonReader> JsonReader::object(const std::string& key) {
  log(key, "an object", "");
  const Json* v = lookup(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) {
    fail(key, "expected an object, got " + json_brief(*v));
    return std::nullopt;
  }
  return JsonReader(*v, path(key), error_);
}

JsonReader JsonReader::object_or_empty(const std::string& key) {
  static const Json kEmpty = Json::object();
  auto child = object(key);
  if (child) return *child;
  return JsonReader(kEmpty, path(key), error_);
}

Status JsonReader::finish() {
  if (!error_->ok()) return *error_;
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    if (known_.count(it.key())) continue;
    std::string allowed;
    for (const std::string& k : known_) allowed += (allowed.empty() ? "" : ", ") + k;
    fail(it.key(), "unknown key" + (allowed.empty() ? std::string() : "; allowed here: " + allowed));
    return *error_;
  }
  return Status::OK();
}

}  // namespace zt
