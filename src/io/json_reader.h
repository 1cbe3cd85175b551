// JsonReader: typed, validating access to one JSON object of a config file, tracking the
// object's JSON pointer so every error names the exact key, the value found and what is
// allowed, e.g. `/zero_optimization/stage: expected an integer 0..3, got "2"`.
//
// Every getter marks its key as known; finish() then refuses any key nobody asked for
// ("unknown key"), so a misspelt or unsupported DeepSpeed key is never silently ignored.
// The first error sticks (later getters return their defaults); callers check status()
// or finish() once at the end. A JSON null counts as absent (DeepSpeed accepts nulls).
// Thread-safety: none; one reader per parse.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/json_strict.h"

namespace zt {

// What one getter read: the key's pointer, what it expects and its default. Recorded
// only while a ScopedKeyLog is installed on the thread (config/coverage.cc builds the
// key list of docs/config-coverage.md from it).
struct KeyLogEntry {
  std::string pointer;
  std::string expects;
  std::string default_value;  // "" when the getter has none (objects, hand-checked values)
};
class ScopedKeyLog {
 public:
  explicit ScopedKeyLog(std::vector<KeyLogEntry>* out);
  ~ScopedKeyLog();
  ScopedKeyLog(const ScopedKeyLog&) = delete;
  ScopedKeyLog& operator=(const ScopedKeyLog&) = delete;

 private:
  std::vector<KeyLogEntry>* previous_;
};

class JsonReader {
 public:
  // obj must be a JSON object; pointer is its location ("" for the root).
  JsonReader(const Json& obj, std::string pointer);

  // True if key is present and not null (and marks it known).
  bool has(const std::string& key);
  int64_t integer(const std::string& key, int64_t dflt, int64_t lo, int64_t hi);
  double number(const std::string& key, double dflt, double lo, double hi);
  bool boolean(const std::string& key, bool dflt);
  std::string string(const std::string& key, const std::string& dflt);
  // One of `allowed`; matching ignores case when case_insensitive. Returns the allowed spelling.
  std::string choice(const std::string& key, const std::string& dflt, std::initializer_list<const char*> allowed,
                     bool case_insensitive = false);
  // A string or an array of strings.
  std::vector<std::string> strings(const std::string& key);
  // A nested object; nullopt (and no error) when absent.
  std::optional<JsonReader> object(const std::string& key);
  // A nested object, or an empty object at that path when absent (errors still shared).
  JsonReader object_or_empty(const std::string& key);
  // A reader for another object (an array element: pointer ".../tensors/3") that shares
  // this reader's first-error status. `obj` must be an object and outlive the reader.
  JsonReader nested(const Json& obj, std::string pointer) const { return JsonReader(obj, std::move(pointer), error_); }
  // The raw value of a known key (present and not null), for hand-validated shapes.
  const Json* raw(const std::string& key);

  // Records an error for `key` with a message written by the caller ("...: <why>").
  void fail(const std::string& key, const std::string& why);
  // Marks key known without reading it.
  void accept(const std::string& key) { known_.insert(key); }

  // The first error of this reader or any child created from it, else OK.
  Status status() const { return *error_ ; }
  // status(), then unknown-key detection for this object.
  Status finish();
  // finish() for a child reader: the error, if any, lands in the shared status.
  void done() { (void)finish(); }

  const std::string& pointer() const { return pointer_; }
  std::string path(const std::string& key) const { return pointer_ + "/" + json_pointer_escape(key); }

 private:
  JsonReader(const Json& obj, std::string pointer, std::shared_ptr<Status> error);
  const Json* lookup(const std::string& key);
  void log(const std::string& key, std::string expects, std::string dflt) const;

  const Json* obj_;
  std::string pointer_;
  std::set<std::string> known_;
  std::shared_ptr<Status> error_;
};

// A short rendering of a JSON value for messages: "2" for the string, 2 for the number.
std::string json_brief(const Json& value);

}  // namespace zt
