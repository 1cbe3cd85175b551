// nlohmann callback parse with a path stack for duplicate-key detection and a nesting
// limit: nlohmann parses iteratively, but copying, dumping and comparing a document
// recurse once per level, so "[[[[..." a few megabytes deep would overflow the stack.
#include "io/json_strict.h"

#include <set>
#include <vector>

namespace zt {

std::string json_pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

constexpr size_t kMaxJsonDepth = 512;  // zerotrain's own files nest fewer than 10 levels

struct NestingTooDeep {};  // thrown by the parse callback, caught below

struct Frame {
  bool is_object;
  std::set<std::string> keys;
  std::string key;  // current key (objects)
  size_t index = 0; // current element (arrays)
};

std::string pointer_of(const std::vector<Frame>& stack) {
  std::string p;
  for (const Frame& f : stack) {
    p.push_back('/');
    p.append(f.is_object ? json_pointer_escape(f.key) : std::to_string(f.index));
  }
  return p;
}

}  // namespace

StatusOr<Json> parse_json_strict(const std::string& text, const std::string& label) {
  std::vector<Frame> stack;
  std::string duplicate;
  auto after_value = [&stack]() {
    if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
  };
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (stack.size() == kMaxJsonDepth) throw NestingTooDeep{};
        stack.push_back(Frame{event == Json::parse_event_t::object_start, {}, {}, 0});
        break;
      case Json::parse_event_t::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && duplicate.empty()) duplicate = pointer_of(stack);
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        stack.pop_back();
        after_value();
        break;
      case Json::parse_event_t::value:
        after_value();
        break;
    }
    return true;
  };
  Json result;
  try {
    result = Json::parse(text, callback);
  } catch (const Json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    // or, for a number like 1e400, "[json.exception.out_of_range.406] number overflow ...".
    std::string what = e.what();
    const size_t pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return Status::InvalidArgument(label + ": invalid JSON: " + what);
  } catch (const NestingTooDeep&) {
    return Status::InvalidArgument(label + ": invalid JSON: arrays and objects nested deeper than " +
                                   std::to_string(kMaxJsonDepth) + " levels");
  }
  if (!duplicate.empty()) return Status::InvalidArgument(label + ": " + duplicate + ": duplicate key");
  return result;
}

}  // namespace zt
