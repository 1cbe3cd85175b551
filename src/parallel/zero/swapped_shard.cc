// Staged, read-ahead layer parts of an offloaded parameter shard; see swapped_shard.h.
#include "parallel/zero/swapped_shard.h"

#include "core/check.h"

namespace zt {

StatusOr<std::unique_ptr<SwappedShard>> SwappedShard::create(SwapArrays* swap, size_t array, const void* cache,
                                                             size_t cache_elems, int buffer_count, size_t max_part,
                                                             bool pin) {
  std::unique_ptr<SwappedShard> s(new SwappedShard(swap, array, static_cast<const unsigned char*>(cache), cache_elems));
  const size_t eb = swap->specs()[array].elem_bytes;
  const size_t bytes = stage_bytes(max_part, eb);
  s->stages_.resize(static_cast<size_t>(std::max(2, buffer_count)));
  for (Stage& st : s->stages_) {
    ZT_ASSIGN_OR_RETURN(st.buf, IoBuffer::allocate(bytes, pin, "a parameter offload buffer"));
  }
  return s;
}

size_t SwappedShard::stage_bytes(size_t max_part, size_t elem_bytes) {
  return round_up_io(max_part * elem_bytes) + 2 * kSumBlock;  // whole checksum blocks on both sides
}

size_t SwappedShard::buffer_bytes() const {
  size_t n = 0;
  for (const Stage& s : stages_) n += s.buf.bytes();
  return n;
}

SwappedShard::Stage* SwappedShard::find(size_t begin, size_t end) {
  for (Stage& s : stages_) {
    if (s.state == Stage::kReading && s.begin == begin && s.end == end) return &s;
  }
  return nullptr;
}

SwappedShard::Stage* SwappedShard::free_stage() {
  for (Stage& s : stages_) {
    if (s.state == Stage::kFree) return &s;
  }
  return nullptr;
}

void SwappedShard::start(Stage* s, size_t begin, size_t end) {
  ZT_CHECK(swap_->staging_bytes(array_, begin, end) <= s->buf.bytes(), "layer part [%zu, %zu) exceeds its buffer", begin,
           end);
  s->state = Stage::kReading;
  s->begin = begin;
  s->end = end;
  s->read = swap_->start_read(array_, begin, end, s->buf.data());
}

void SwappedShard::prefetch(size_t begin, size_t end) {
  if (end <= cache_elems_ || find(begin, end) != nullptr) return;
  // One buffer stays for the part being handed out.
  int free = 0;
  for (const Stage& s : stages_) free += s.state == Stage::kFree;
  if (free < 2) return;
  start(free_stage(), begin, end);
}

StatusOr<const void*> SwappedShard::part(size_t begin, size_t end) {
  for (Stage& s : stages_) {
    if (s.state == Stage::kHanded) s.state = Stage::kFree;
  }
  if (end <= cache_elems_) return static_cast<const void*>(cache_ + begin * swap_->specs()[array_].elem_bytes);
  Stage* s = find(begin, end);
  if (s == nullptr) {
    s = free_stage();
    ZT_CHECK(s != nullptr, "every parameter offload buffer is busy");
    start(s, begin, end);
  }
  StatusOr<const void*> got = swap_->finish_read(s->read);
  s->state = got.ok() ? Stage::kHanded : Stage::kFree;
  return got;
}

void SwappedShard::invalidate() {
  for (Stage& s : stages_) {
    if (s.state == Stage::kReading) (void)swap_->finish_read(s.read);
    s.state = Stage::kFree;
  }
}

}  // namespace zt
