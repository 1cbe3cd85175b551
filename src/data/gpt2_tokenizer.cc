// Gpt2Tokenizer encode/decode. BPE runs on token ids with a min-heap of candidate
// pairs keyed by (rank, position) over a linked list of symbols: O(n log n) per chunk
// instead of encoder.py's O(n^2), with the same result (see bpe()).
#include "data/gpt2_tokenizer.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace zt {

namespace {

struct HeapEntry {
  int32_t rank;
  int32_t pos;    // position of the left symbol
  int32_t left;   // ids the pair had when queued; stale entries fail this check
  int32_t right;
  int32_t merged;
};

// std heap functions build max-heaps; this order puts the lowest (rank, pos) on top.
struct HeapAfter {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

constexpr size_t kMaxCachedChunk = 64;  // longer chunks rarely repeat

}  // namespace

struct Gpt2Tokenizer::Scratch {
  std::vector<int32_t> id, prev, next;
  std::vector<HeapEntry> heap, pending;
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
  ZT_CHECK(chunk.size() < (size_t{1} << 31), "gpt2 bpe: a single pre-token of %zu bytes", chunk.size());
  const auto n = static_cast<int32_t>(chunk.size());
  s->id.resize(n);
  s->prev.resize(n);
  s->next.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    s->id[i] = byte_to_id_[static_cast<unsigned char>(chunk[i])];
    s->prev[i] = i - 1;
    s->next[i] = i + 1 < n ? i + 1 : -1;
  }
  s->heap.clear();
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (const Merge* m = find_merge(s->id[i], s->id[i + 1])) {
      s->heap.push_back({m->rank, i, s->id[i], s->id[i + 1], m->merged_id});
    }
  }
  std::make_heap(s->heap.begin(), s->heap.end(), HeapAfter());
  auto queue_pair = [&](int32_t pos) {
    const int32_t nx = s->next[pos];
    if (nx < 0) return;
    if (const Merge* m = find_merge(s->id[pos], s->id[nx])) {
      s->pending.push_back({m->rank, pos, s->id[pos], s->id[nx], m->merged_id});
    }
  };
  while (!s->heap.empty()) {
    const int32_t rank = s->heap.front().rank;
    s->pending.clear();
    while (!s->heap.empty() && s->heap.front().rank == rank) {
      std::pop_heap(s->heap.begin(), s->heap.end(), HeapAfter());
      const HeapEntry e = s->heap.back();
      s->heap.pop_back();
      if (s->id[e.pos] != e.left) continue;  // left symbol merged or removed since
      const int32_t nx = s->next[e.pos];
      if (nx < 0 || s->id[nx] != e.right) continue;
      s->id[e.pos] = e.merged;
      s->id[nx] = -1;
      s->next[e.pos] = s->next[nx];
      if (s->next[nx] >= 0) s->prev[s->next[nx]] = e.pos;
      if (s->prev[e.pos] >= 0) queue_pair(s->prev[e.pos]);
      queue_pair(e.pos);
    }
    for (const HeapEntry& e : s->pending) {
      s->heap.push_back(e);
      std::push_heap(s->heap.begin(), s->heap.end(), HeapAfter());
    }
  }
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = s->next[i]) out->push_back(s->id[i]);
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
