// HfBpeTokenizer: pre-tokenization (PCRE2), the BPE merge loop, encode and decode
// (loading is hf_bpe_load.cc).
#include "data/hf_bpe_tokenizer.h"
#include "data/hf_bpe_internal.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "data/bpe_word.h"
#include "data/gpt2_byte_map.h"
#include "data/utf8.h"
#include "io/atomic_file.h"
#include "io/json_strict.h"

namespace zt {

namespace {

struct MatchDataDeleter {
  void operator()(pcre2_match_data* md) const { pcre2_match_data_free(md); }
};

constexpr size_t kMaxCachedWord = 64;


}  // namespace

struct HfBpeTokenizer::Scratch : BpeWord {
  std::vector<std::unique_ptr<pcre2_match_data, MatchDataDeleter>> md;  // one per step
  std::vector<std::string_view> a, b;
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> cache;
  std::vector<int32_t> cached_ids;
};

HfBpeTokenizer::HfBpeTokenizer() = default;
HfBpeTokenizer::~HfBpeTokenizer() = default;

StatusOr<std::unique_ptr<HfBpeTokenizer>> HfBpeTokenizer::load(const std::string& path) {
  StatusOr<std::string> text = read_file(path);
  if (!text.ok()) return Status(text.status().code(), "tokenizer.json: " + text.status().message());
  std::unique_ptr<HfBpeTokenizer> tok(new HfBpeTokenizer());
  ZT_RETURN_IF_ERROR(tok->load_json(path, text.value()));
  return tok;
}

int32_t HfBpeTokenizer::token_to_id(const std::string& token) const {
  const auto it = spelled_to_id_.find(token);
  return it == spelled_to_id_.end() ? -1 : it->second;
}

const HfBpeTokenizer::Merge* HfBpeTokenizer::find_merge(int32_t left, int32_t right) const {
  const auto it = merges_.find((static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right));
  return it == merges_.end() ? nullptr : &it->second;
}

// HF Word::merge_all: a min-heap of candidate pairs keyed by (rank, position); pop the
// top, skip it if its symbols changed since it was queued, merge, and queue the pairs
// the merged symbol forms with its neighbours right away.
void HfBpeTokenizer::bpe(std::string_view word, Scratch* s, std::vector<int32_t>* out) const {
  auto find = [this](int32_t left, int32_t right) { return find_merge(left, right); };
  s->start(word, byte_to_id_, find);
  while (!s->heap.empty()) {
    const BpeHeapEntry e = s->pop();
    if (!s->apply(e)) continue;
    BpeHeapEntry formed;
    if (s->prev[e.pos] >= 0 && s->pair_at(s->prev[e.pos], find, &formed)) s->push(formed);
    if (s->pair_at(e.pos, find, &formed)) s->push(formed);
  }
  s->emit(out);
}

void HfBpeTokenizer::encode_segment(std::string_view segment, Scratch* s, std::vector<int32_t>* out) const {
  s->a.assign(1, segment);
  for (size_t k = 0; k < steps_.size(); ++k) {
    s->b.clear();
    for (const std::string_view piece : s->a) steps_[k]->split(piece, s->md[k].get(), &s->b);
    std::swap(s->a, s->b);
  }
  for (const std::string_view word : s->a) {
    if (word.empty()) continue;
    if (word.size() == 1) {
      out->push_back(byte_to_id_[static_cast<unsigned char>(word[0])]);
      continue;
    }
    const bool cacheable = word.size() <= kMaxCachedWord;
    if (cacheable) {
      if (const auto it = s->cache.find(word); it != s->cache.end()) {
        const auto [offset, count] = it->second;
        out->insert(out->end(), s->cached_ids.begin() + offset, s->cached_ids.begin() + offset + count);
        continue;
      }
    }
    const size_t before = out->size();
    const auto whole = ignore_merges_ ? bytes_to_id_.find(std::string(word)) : bytes_to_id_.end();
    if (whole != bytes_to_id_.end()) {
      out->push_back(whole->second);
    } else {
      bpe(word, s, out);
    }
    if (cacheable) {
      s->cache.emplace(word, std::make_pair(s->cached_ids.size(), out->size() - before));
      s->cached_ids.insert(s->cached_ids.end(), out->begin() + before, out->end());
    }
  }
}

std::vector<int32_t> HfBpeTokenizer::encode(std::string_view text) const {
  Scratch s;
  for (const auto& step : steps_) {
    s.md.emplace_back(pcre2_match_data_create_from_pattern(step->code, nullptr));
    ZT_CHECK(s.md.back() != nullptr, "pcre2_match_data_create_from_pattern: out of memory");
  }
  std::vector<int32_t> out;
  out.reserve(text.size() / 4 + 16);
  std::string prefixed;  // add_prefix_space: the segment with a leading space
  auto segment = [&](std::string_view seg) {
    if (seg.empty()) return;
    if (add_prefix_space_ && seg[0] != ' ') {
      prefixed.assign(1, ' ');
      prefixed.append(seg);
      std::string_view view(prefixed);
      // The cache keys are views into the text; keep this segment's words out of it.
      Scratch local;
      local.md = std::move(s.md);
      encode_segment(view, &local, &out);
      s.md = std::move(local.md);
      return;
    }
    encode_segment(seg, &s, &out);
  };
  // Added tokens split the text first: at each position the longest one that matches.
  size_t start = 0, i = 0;
  while (i < text.size() && !added_.empty()) {
    if (!added_first_byte_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    const AddedToken* hit = nullptr;
    for (const AddedToken& a : added_) {  // longest first
      if (text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    segment(text.substr(start, i - start));
    out.push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  segment(text.substr(start));
  return out;
}

std::string HfBpeTokenizer::decode(const int32_t* ids, size_t n) const {
  std::string out;
  out.reserve(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id >= 0 && id < vocab_size_ && id_known_[id]) {
      out += id_to_bytes_[id];
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    }
  }
  return out;
}

}  // namespace zt
