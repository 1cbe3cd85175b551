// Gpt2Tokenizer encode/decode. BPE runs on token ids with a min-heap of candidate
// pairs keyed by (rank, position) over a linked list of symbols: O(n log n) per chunk
// instead of encoder.py's O(n^2), with the same result (see bpe()).
#include "data/gpt2_tokenizer.h"

#include <algorithm>
#include <utility>

#include "core/check.h"
#include "data/bpe_word.h"

namespace zt {

namespace {

constexpr size_t kMaxCachedChunk = 64;  // longer chunks rarely repeat

}  // namespace

struct Gpt2Tokenizer::Scratch : BpeWord {
  std::vector<BpeHeapEntry> pending;  // pairs formed during the current rank's round
};

const Gpt2Tokenizer::Merge* Gpt2Tokenizer::find_merge(int32_t left, int32_t right) const {
  const auto it = merges_.find((static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right));
  return it == merges_.end() ? nullptr : &it->second;
}

// encoder.py's bpe(): while some adjacent pair has a rank, take the lowest rank r and
// merge every occurrence of that pair, scanning left to right without overlap. Here
// the heap yields rank r's occurrences in position order; entries whose symbols have
// changed since they were queued are dropped (e.g. the second pair of "aaa" once the
// first has merged). Pairs formed by a merge wait in `pending` until all of rank r is
// done: a pair formed with the merged token can never be the pair being merged (the
// merged token is longer than either part), and deferring keeps even a pair of lower
// rank out of the current round, as in encoder.py.
void Gpt2Tokenizer::bpe(std::string_view chunk, Scratch* s, std::vector<int32_t>* out) const {
  auto find = [this](int32_t left, int32_t right) { return find_merge(left, right); };
  s->start(chunk, byte_to_id_, find);
  while (!s->heap.empty()) {
    const int32_t rank = s->heap.front().rank;
    s->pending.clear();
    while (!s->heap.empty() && s->heap.front().rank == rank) {
      const BpeHeapEntry e = s->pop();
      if (!s->apply(e)) continue;
      BpeHeapEntry formed;
      if (s->prev[e.pos] >= 0 && s->pair_at(s->prev[e.pos], find, &formed)) s->pending.push_back(formed);
      if (s->pair_at(e.pos, find, &formed)) s->pending.push_back(formed);
    }
    for (const BpeHeapEntry& e : s->pending) s->push(e);
  }
  s->emit(out);
}

std::vector<int32_t> Gpt2Tokenizer::encode(std::string_view text) const {
  std::vector<std::string_view> chunks;
  pretokenizer_->split(text, &chunks);
  std::vector<int32_t> out;
  out.reserve(text.size() / 4 + 16);
  Scratch scratch;
  // Per-call word cache: chunk -> [offset, offset + count) in cached_ids.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> cache;
  std::vector<int32_t> cached_ids;
  for (const std::string_view chunk : chunks) {
    if (chunk.size() == 1) {
      out.push_back(byte_to_id_[static_cast<unsigned char>(chunk[0])]);
      continue;
    }
    const bool cacheable = chunk.size() <= kMaxCachedChunk;
    if (cacheable) {
      if (const auto it = cache.find(chunk); it != cache.end()) {
        const auto [offset, count] = it->second;
        out.insert(out.end(), cached_ids.begin() + offset, cached_ids.begin() + offset + count);
        continue;
      }
    }
    const size_t before = out.size();
    bpe(chunk, &scratch, &out);
    if (cacheable) {
      cache.emplace(chunk, std::make_pair(cached_ids.size(), out.size() - before));
      cached_ids.insert(cached_ids.end(), out.begin() + before, out.end());
    }
  }
  return out;
}

std::string Gpt2Tokenizer::decode(const int32_t* ids, size_t n) const {
  std::string out;
  out.reserve(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id >= 0 && id < kVocabSize) {
      out += id_to_bytes_[id];  // 50256's bytes are "<|endoftext|>"
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    }
  }
  return out;
}

}  // namespace zt
