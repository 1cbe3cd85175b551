// HfBpeTokenizer::load_json: a tokenizer.json checked part by part (the header comment of
// hf_bpe_tokenizer.h says what is accepted); each refusal names the file and the part.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "data/gpt2_byte_map.h"
#include "data/hf_bpe_internal.h"
#include "io/json_strict.h"

namespace zt {

using hf_bpe::where;

namespace {

bool flag(const Json& o, const char* key) { return o.contains(key) && o[key].is_boolean() && o[key].get<bool>(); }

// A vocabulary id: an integer in [0, 2^30).
bool valid_id(const Json& v) {
  return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < (int64_t{1} << 30);
}

// The "a b" or ["a", "b"] form of merge `rank`.
Status merge_parts(const std::string& path, const Json& m, int32_t rank, std::string* left, std::string* right) {
  const std::string at = where(path) + "model.merges[" + std::to_string(rank) + "] " + m.dump();
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    const size_t sp = s.find(' ');
    if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
      return Status::Corruption(at + " is not two tokens separated by one space");
    }
    *left = s.substr(0, sp);
    *right = s.substr(sp + 1);
    return Status::OK();
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    *left = m[0].get<std::string>();
    *right = m[1].get<std::string>();
    return Status::OK();
  }
  return Status::Corruption(at + " is neither \"a b\" nor [\"a\", \"b\"]");
}

// One pre-tokenizer step as a (pattern, extra PCRE2 options); ByteLevel sets *prefix.
Status step_pattern(const std::string& path, const Json& s, bool last, size_t n_steps, bool* prefix,
                    std::vector<std::pair<std::string, uint32_t>>* patterns) {
  const std::string t = s.is_object() ? s.value("type", "") : "";
  if (t == "ByteLevel") {
    if (!last) return Status::Unimplemented(where(path) + "ByteLevel must be the last pre-tokenizer of the Sequence");
    *prefix = flag(s, "add_prefix_space");
    if (*prefix && n_steps > 1) {
      return Status::Unimplemented(where(path) + "ByteLevel.add_prefix_space after other pre-tokenizers is not supported");
    }
    const bool use_regex = !s.contains("use_regex") || !s["use_regex"].is_boolean() || s["use_regex"].get<bool>();
    if (use_regex) patterns->emplace_back(hf_bpe::kByteLevelPattern, 0);
  } else if (t == "Split") {
    const Json pat = s.value("pattern", Json());
    if (s.value("behavior", "") != "Isolated" || flag(s, "invert")) {
      return Status::Unimplemented(where(path) + "Split pre-tokenizer with behavior " +
                                   Json(s.value("behavior", "")).dump() + (flag(s, "invert") ? " and invert" : "") +
                                   " is not supported (only Isolated)");
    }
    if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string()) {
      patterns->emplace_back(pat["Regex"].get<std::string>(), 0);
    } else if (pat.is_object() && pat.contains("String") && pat["String"].is_string()) {
      patterns->emplace_back(pat["String"].get<std::string>(), PCRE2_LITERAL);
    } else {
      return Status::Corruption(where(path) + "Split pre-tokenizer without a Regex or String pattern");
    }
  } else if (t == "Digits") {
    patterns->emplace_back(flag(s, "individual_digits") ? "\\p{N}" : "\\p{N}+", 0);
  } else {
    return Status::Unimplemented(where(path) + "pre-tokenizer \"" + t +
                                 "\" is not supported (only Split, Digits and ByteLevel)");
  }
  return Status::OK();
}

}  // namespace

Status HfBpeTokenizer::load_json(const std::string& path, const std::string& text) {
  StatusOr<Json> parsed = parse_json_strict(text, path);
  if (!parsed.ok()) return Status::Corruption("tokenizer.json: " + parsed.status().message());
  const Json& j = parsed.value();
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) {
    return Status::Corruption(where(path) + "no \"model\" object; not a HuggingFace tokenizer.json");
  }
  ZT_RETURN_IF_ERROR(check_model(path, j));
  std::unordered_map<std::string, int32_t> vocab;
  ZT_RETURN_IF_ERROR(load_vocab(path, j, &vocab));
  ZT_RETURN_IF_ERROR(load_merges(path, j["model"], vocab));
  ZT_RETURN_IF_ERROR(load_pre_tokenizer(path, j));
  return find_specials(path);
}

Status HfBpeTokenizer::check_model(const std::string& path, const Json& j) {
  const Json& model = j["model"];
  const std::string type = model.contains("type") && model["type"].is_string() ? model["type"].get<std::string>()
                           : model.contains("merges")                           ? "BPE"
                                                                                : "(none)";
  if (type != "BPE") {
    return Status::Unimplemented(where(path) + "model type \"" + type +
                                 "\" is not supported; only byte-level BPE models (Llama 3, SmolLM, GPT-2) are");
  }
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"].get<double>() != 0.0) {
    return Status::Unimplemented(where(path) + "BPE dropout is not supported (it makes encoding random)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty()) {
      return Status::Unimplemented(where(path) + "model." + key + " is not supported by the byte-level BPE reader");
    }
  }
  ignore_merges_ = flag(model, "ignore_merges");
  if (j.contains("normalizer") && !j["normalizer"].is_null()) {
    return Status::Unimplemented(where(path) + "normalizer \"" + j["normalizer"].value("type", "?") +
                                 "\" is not supported (only tokenizers without a normalizer are)");
  }
  return Status::OK();
}

// model.vocab and added_tokens: the id tables, then every byte's token.
Status HfBpeTokenizer::load_vocab(const std::string& path, const Json& j,
                                  std::unordered_map<std::string, int32_t>* vocab) {
  const Json& model = j["model"];
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return Status::Corruption(where(path) + "model.vocab is missing or not an object");
  }
  int32_t max_id = -1;
  std::vector<std::pair<int32_t, std::string>> entries;
  for (const auto& [token, value] : model["vocab"].items()) {
    if (!valid_id(value)) {
      return Status::Corruption(where(path) + "model.vocab[" + Json(token).dump() + "] is not an id in [0, 2^30)");
    }
    const auto id = static_cast<int32_t>(value.get<int64_t>());
    vocab->emplace(token, id);
    entries.emplace_back(id, token);
    max_id = std::max(max_id, id);
  }
  std::vector<AddedToken> added;
  ZT_RETURN_IF_ERROR(load_added(path, j, &added, &max_id));
  vocab_size_ = max_id + 1;
  id_to_bytes_.assign(vocab_size_, std::string());
  id_known_.assign(vocab_size_, 0);
  for (const auto& [id, token] : entries) {
    if (id_known_[id]) return Status::Corruption(where(path) + "model.vocab gives id " + std::to_string(id) + " twice");
    std::string bytes;
    if (gpt2_token_to_bytes(token, &bytes)) {
      bytes_to_id_.emplace(bytes, id);
    } else {
      bytes = token;  // not byte-level spelled (e.g. a special): decodes as written
    }
    id_to_bytes_[id] = std::move(bytes);
    id_known_[id] = 1;
  }
  spelled_to_id_ = *vocab;
  for (const AddedToken& a : added) {
    id_to_bytes_[a.id] = a.content;
    id_known_[a.id] = 1;
    spelled_to_id_[a.content] = a.id;
    added_.push_back(a);
    added_first_byte_[static_cast<unsigned char>(a.content[0])] = true;
  }
  std::stable_sort(added_.begin(), added_.end(),
                   [](const AddedToken& x, const AddedToken& y) { return x.content.size() > y.content.size(); });
  return load_byte_ids(path);
}

Status HfBpeTokenizer::load_added(const std::string& path, const Json& j, std::vector<AddedToken>* added,
                                  int32_t* max_id) {
  if (!j.contains("added_tokens") || !j["added_tokens"].is_array()) return Status::OK();
  for (const Json& a : j["added_tokens"]) {
    if (!a.is_object() || !a.contains("id") || !valid_id(a["id"]) || !a.contains("content") || !a["content"].is_string()) {
      return Status::Corruption(where(path) + "an added_tokens entry lacks a valid id or content: " + a.dump());
    }
    for (const char* f : {"single_word", "lstrip", "rstrip"}) {
      if (flag(a, f)) {
        return Status::Unimplemented(where(path) + "added token " + a["content"].dump() + " sets " + f +
                                     ", which is not supported");
      }
    }
    const std::string content = a["content"].get<std::string>();
    if (content.empty()) return Status::Corruption(where(path) + "an added token has empty content");
    added->push_back({content, static_cast<int32_t>(a["id"].get<int64_t>())});
    *max_id = std::max(*max_id, added->back().id);
  }
  return Status::OK();
}

Status HfBpeTokenizer::load_byte_ids(const std::string& path) {
  for (int b = 0; b < 256; ++b) {
    const auto it = bytes_to_id_.find(std::string(1, static_cast<char>(b)));
    if (it == bytes_to_id_.end()) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", b);
      return Status::Corruption(where(path) + "model.vocab has no token for byte " + hex + " (spelled " +
                                Json(gpt2_bytes_to_token(std::string(1, static_cast<char>(b)))).dump() +
                                "); not a byte-level BPE vocabulary");
    }
    byte_to_id_[b] = it->second;
  }
  return Status::OK();
}

Status HfBpeTokenizer::load_merges(const std::string& path, const Json& model,
                                   const std::unordered_map<std::string, int32_t>& vocab) {
  if (!model.contains("merges") || !model["merges"].is_array()) {
    return Status::Corruption(where(path) + "model.merges is missing or not an array");
  }
  int32_t rank = 0;
  for (const Json& m : model["merges"]) {
    std::string left, right;
    ZT_RETURN_IF_ERROR(merge_parts(path, m, rank, &left, &right));
    const auto l = vocab.find(left), r = vocab.find(right), merged = vocab.find(left + right);
    if (l == vocab.end() || r == vocab.end() || merged == vocab.end()) {
      return Status::Corruption(where(path) + "model.merges[" + std::to_string(rank) + "] " + m.dump() +
                                ": a part or the merged token is not in model.vocab");
    }
    const uint64_t key = (static_cast<uint64_t>(l->second) << 32) | static_cast<uint32_t>(r->second);
    merges_.emplace(key, Merge{rank, merged->second});  // a repeated pair keeps its first rank
    ++rank;
  }
  return Status::OK();
}

Status HfBpeTokenizer::load_pre_tokenizer(const std::string& path, const Json& j) {
  const Json pt = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json();
  std::vector<Json> steps;
  if (pt.is_object() && pt.value("type", "") == "Sequence" && pt.contains("pretokenizers") &&
      pt["pretokenizers"].is_array()) {
    for (const Json& s : pt["pretokenizers"]) steps.push_back(s);
  } else if (pt.is_object()) {
    steps.push_back(pt);
  }
  if (steps.empty() || !steps.back().is_object() || steps.back().value("type", "") != "ByteLevel") {
    return Status::Unimplemented(where(path) + "pre_tokenizer " +
                                 (pt.is_null() ? std::string("null") : pt.dump().substr(0, 200)) +
                                 " is not supported: a byte-level BPE needs ByteLevel, alone or last in a Sequence");
  }
  std::vector<std::pair<std::string, uint32_t>> patterns;  // (pattern, extra PCRE2 options)
  for (size_t i = 0; i < steps.size(); ++i) {
    ZT_RETURN_IF_ERROR(step_pattern(path, steps[i], i + 1 == steps.size(), steps.size(), &add_prefix_space_, &patterns));
  }
  for (const auto& [pattern, extra] : patterns) {
    auto step = std::make_unique<PreStep>();
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    step->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                               PCRE2_UTF | PCRE2_UCP | extra, &error, &error_offset, nullptr);
    if (step->code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(error, msg, sizeof(msg));
      return Status::Corruption(where(path) + "PCRE2 cannot compile the pre-tokenizer pattern " + Json(pattern).dump() +
                                " at offset " + std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(msg));
    }
    (void)pcre2_jit_compile(step->code, PCRE2_JIT_COMPLETE);  // an optimisation only
    steps_.push_back(std::move(step));
  }
  return Status::OK();
}

Status HfBpeTokenizer::find_specials(const std::string& path) {
  for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"}) {
    if (const int32_t id = token_to_id(name); id >= 0) {
      eot_ = id;
      break;
    }
  }
  if (eot_ < 0) {
    return Status::InvalidArgument(where(path) + "no end-of-text token (looked for <|end_of_text|>, <|endoftext|>, "
                                   "</s>, <eos>); documents could not be separated");
  }
  for (const char* name : {"<|begin_of_text|>", "<s>", "<bos>"}) {
    if (const int32_t id = token_to_id(name); id >= 0) {
      bos_ = id;
      break;
    }
  }
  return Status::OK();
}

}  // namespace zt
