// BpeWord: the state of byte-level BPE on one pre-token, shared by Gpt2Tokenizer
// (encoder.py's merge order) and HfBpeTokenizer (HF Word::merge_all's): the symbols as a
// linked list over token ids, and a min-heap of candidate pairs keyed by (rank, position).
// Entries are not removed when their symbols change; apply() skips such stale ones.
// The two tokenizers differ only in when pairs formed by a merge enter the heap.
// Thread-safety: one per encode() call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/check.h"

namespace zt {

struct BpeHeapEntry {
  int32_t rank;
  int32_t pos;    // position of the left symbol
  int32_t left;   // ids the pair had when queued; stale entries fail this check
  int32_t right;
  int32_t merged;
};

// std heap functions build max-heaps; this order puts the lowest (rank, pos) on top.
struct BpeHeapAfter {
  bool operator()(const BpeHeapEntry& a, const BpeHeapEntry& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

struct BpeWord {
  std::vector<int32_t> id, prev, next;
  std::vector<BpeHeapEntry> heap;

  // One symbol per byte of `word`, and every mergeable adjacent pair queued. find(left,
  // right) returns a pointer to the merge ({rank, merged_id}) or null.
  template <typename Find>
  void start(std::string_view word, const int32_t* byte_to_id, Find find) {
    ZT_CHECK(word.size() < (size_t{1} << 31), "bpe: a single pre-token of %zu bytes", word.size());
    const auto n = static_cast<int32_t>(word.size());
    id.resize(static_cast<size_t>(n));
    prev.resize(static_cast<size_t>(n));
    next.resize(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
      id[i] = byte_to_id[static_cast<unsigned char>(word[i])];
      prev[i] = i - 1;
      next[i] = i + 1 < n ? i + 1 : -1;
    }
    heap.clear();
    for (int32_t i = 0; i + 1 < n; ++i) {
      if (const auto* m = find(id[i], id[i + 1])) heap.push_back({m->rank, i, id[i], id[i + 1], m->merged_id});
    }
    std::make_heap(heap.begin(), heap.end(), BpeHeapAfter());
  }

  // The pair starting at pos with its current ids and merge, if it has one.
  template <typename Find>
  bool pair_at(int32_t pos, Find find, BpeHeapEntry* e) const {
    const int32_t nx = next[pos];
    if (nx < 0) return false;
    const auto* m = find(id[pos], id[nx]);
    if (m == nullptr) return false;
    *e = {m->rank, pos, id[pos], id[nx], m->merged_id};
    return true;
  }

  BpeHeapEntry pop() {
    std::pop_heap(heap.begin(), heap.end(), BpeHeapAfter());
    const BpeHeapEntry e = heap.back();
    heap.pop_back();
    return e;
  }
  void push(const BpeHeapEntry& e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), BpeHeapAfter());
  }

  // Merges e's pair unless its symbols changed since it was queued (then false).
  bool apply(const BpeHeapEntry& e) {
    if (id[e.pos] != e.left) return false;  // left symbol merged or removed since
    const int32_t nx = next[e.pos];
    if (nx < 0 || id[nx] != e.right) return false;
    id[e.pos] = e.merged;
    id[nx] = -1;
    next[e.pos] = next[nx];
    if (next[nx] >= 0) prev[next[nx]] = e.pos;
    return true;
  }

  void emit(std::vector<int32_t>* out) const {
    for (int32_t i = id.empty() ? -1 : 0; i >= 0; i = next[i]) out->push_back(id[i]);
  }
};

}  // namespace zt
