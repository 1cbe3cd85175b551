// Strict JSON parsing for every JSON zerotrain reads (configs, safetensors headers,
// manifests): syntax errors give line and column; duplicate keys, which nlohmann would
// silently collapse, are errors naming the key's JSON pointer (RFC 6901). Arrays and
// objects nested deeper than 512 levels are refused (deeper documents would overflow
// the stack in nlohmann's recursive copy, dump and compare).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace zt {

using Json = nlohmann::json;

// label names the source in errors ("config.json", "model.safetensors header").
StatusOr<Json> parse_json_strict(const std::string& text, const std::string& label);

// "/a~1b/0" style pointer component escaping.
std::string json_pointer_escape(const std::string& key);

}  // namespace zt
