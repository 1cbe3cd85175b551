// Gather sequence, prefetch and buffer pool of ZeRO-3.
#include "parallel/zero/param_fetcher.h"

#include <algorithm>
#include <cstring>

#include "comm/element_gather.h"
#include "core/check.h"
#include "parallel/zero/quantized_gather.h"

namespace zt {

namespace {

class MemoryShard final : public ShardSource {
 public:
  MemoryShard(const void* shard, size_t elem_bytes, bool host)
      : shard_(static_cast<const unsigned char*>(shard)), eb_(elem_bytes), host_(host) {}
  StatusOr<const void*> part(size_t begin, size_t) override { return static_cast<const void*>(shard_ + begin * eb_); }
  bool host() const override { return host_; }

 private:
  const unsigned char* shard_;
  size_t eb_;
  bool host_;
};

}  // namespace

ParamFetcher::ParamFetcher(const ParamTable& table, const Partition& partition, ProcessGroup* dp,
                           const void* param_shard, int n_layer, const ParamFetcherOptions& options)
    : ParamFetcher(table, partition, dp, static_cast<ShardSource*>(nullptr), n_layer, options) {
  own_source_ = std::make_unique<MemoryShard>(param_shard, dtype_size(options.dtype), options.shard_on_host);
  source_ = own_source_.get();
}

ParamFetcher::ParamFetcher(const ParamTable& table, const Partition& partition, ProcessGroup* dp, ShardSource* source,
                           int n_layer, const ParamFetcherOptions& options)
    : partition_(partition),
      dp_(dp),
      source_(source),
      options_(options),
      range_(static_cast<size_t>(n_layer + 2)),
      persistent_(static_cast<size_t>(n_layer + 2)),
      persistent_copy_(static_cast<size_t>(n_layer + 2)) {
  ZT_CHECK(!options.quantized_weights || backend().host(), "qwZ gathers into host memory only");
  for (int layer = kEmbeddingLayer; layer <= n_layer; ++layer) {
    const size_t i = static_cast<size_t>(layer + 1);
    range_[i] = table.layer_range(layer);
    persistent_[i] = range_[i].size() < options.persistence_threshold;
    if (persistent_[i]) {
      persistent_copy_[i] = allocate(range_[i].size());
      peak_bytes_ += persistent_copy_[i].bytes();
    }
  }
  if (options.hpz == nullptr) return;
  secondary_.resize(range_.size());
  secondary_fresh_.assign(range_.size(), false);
  for (int layer = kEmbeddingLayer; layer <= n_layer; ++layer) {
    if (persistent(layer)) continue;
    Arena& a = secondary_[static_cast<size_t>(layer + 1)];
    a = allocate(std::max<size_t>(1, secondary_partition(layer).shard(options.hpz->rank()).size()));
    peak_bytes_ += a.bytes();
  }
}

Partition ParamFetcher::secondary_partition(int layer) const {
  return Partition(range_[static_cast<size_t>(layer + 1)].size(), options_.hpz->size(), elem_bytes() == 2 ? 2 : 1);
}

void ParamFetcher::save_secondary(const Slot& slot) {
  const ElementRange mine = secondary_partition(slot.layer).shard(options_.hpz->rank());
  const size_t e = elem_bytes();
  backend().copy(secondary_[static_cast<size_t>(slot.layer + 1)].as<void>(),
                 static_cast<const unsigned char*>(slot.buffer) + mine.begin * e, mine.size() * e);
  secondary_fresh_[static_cast<size_t>(slot.layer + 1)] = true;
}

WorkHandle ParamFetcher::gather_secondary(const Slot& slot) {
  const Partition p = secondary_partition(slot.layer);
  const ElementRange mine = p.shard(options_.hpz->rank());
  const size_t e = elem_bytes();
  backend().copy(static_cast<unsigned char*>(slot.buffer) + mine.begin * e,
                 secondary_[static_cast<size_t>(slot.layer + 1)].as<void>(), mine.size() * e);
  return all_gather_elements(options_.hpz, slot.buffer, p.counts({0, p.numel()}), e);
}

// A backward gather under hpZ needs this micro-batch's forward save of its layer.
bool ParamFetcher::startable(const Slot& slot) const {
  return options_.hpz == nullptr || !slot.backward || secondary_fresh_[static_cast<size_t>(slot.layer + 1)];
}

size_t ParamFetcher::buffer_bytes() const { return peak_bytes_; }

void ParamFetcher::begin_micro(bool with_backward) {
  ZT_CHECK(next_ == sequence_.size(), "previous micro-batch left %zu fetches unused", sequence_.size() - next_);
  const int n_layer = static_cast<int>(range_.size()) - 2;
  if (options_.hpz != nullptr) secondary_fresh_.assign(secondary_fresh_.size(), false);
  std::vector<int> order = {kEmbeddingLayer};
  for (int l = 0; l < n_layer; ++l) order.push_back(l);
  order.push_back(n_layer);          // ln_f
  order.push_back(kEmbeddingLayer);  // the tied LM head
  if (with_backward) {
    for (int l = n_layer - 1; l >= 0; --l) order.push_back(l);
  }
  sequence_.clear();
  const size_t forward = static_cast<size_t>(n_layer) + 3;  // embeddings, blocks, ln_f, the tied head
  for (size_t i = 0; i < order.size(); ++i) {
    if (!persistent(order[i])) sequence_.push_back(Slot{order[i], ParamState::kNotAvailable, nullptr, nullptr, i >= forward});
  }
  next_ = started_ = 0;
}

Arena ParamFetcher::allocate(size_t elems) const {
  StatusOr<Arena> buf = backend().allocate(elems, options_.dtype, "a ZeRO-3 parameter gather buffer");
  ZT_CHECK(buf.ok(), "%s", buf.status().to_string().c_str());
  return std::move(buf).value();
}

void* ParamFetcher::take_buffer(size_t elems) {
  for (size_t i = 0; i < free_.size(); ++i) {
    if (free_[i].first == elems) {
      void* p = free_[i].second;
      free_.erase(free_.begin() + static_cast<long>(i));
      return p;
    }
  }
  pool_.emplace_back(elems, allocate(elems));
  live_bytes_ += pool_.back().second.bytes();
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
  return pool_.back().second.as<void>();
}

void ParamFetcher::give_back(void* buffer, size_t elems) { free_.emplace_back(elems, buffer); }

ElementRange ParamFetcher::own_part(ElementRange r) const {
  const ElementRange mine = partition_.shard(dp_->rank());
  const size_t lo = std::max(mine.begin, r.begin), hi = std::min(mine.end, r.end);
  return lo < hi ? ElementRange{lo - mine.begin, hi - mine.begin} : ElementRange{0, 0};
}

StatusOr<WorkHandle> ParamFetcher::gather(void* dst, ElementRange r, bool quantized) {
  // Our own part goes in place; the all-gather fills in everyone else's.
  const ElementRange part = own_part(r);
  if (part.size() > 0) {
    const size_t e = elem_bytes(), at = partition_.shard(dp_->rank()).begin + part.begin - r.begin;
    ZT_ASSIGN_OR_RETURN(const void* src, source_->part(part.begin, part.end));
    void* to = static_cast<unsigned char*>(dst) + at * e;
    if (source_->host()) {
      backend().copy_from_host(to, src, part.size() * e);
    } else {
      backend().copy(to, src, part.size() * e);
    }
  }
  if (quantized) return quantized_all_gather(dp_, dst, partition_.counts(r), options_.dtype);
  return all_gather_elements(dp_, dst, partition_.counts(r), elem_bytes());
}

Status ParamFetcher::start(Slot& slot) {
  const ElementRange r = range_[static_cast<size_t>(slot.layer + 1)];
  slot.buffer = take_buffer(r.size());
  if (options_.hpz != nullptr && slot.backward) {
    ZT_CHECK(startable(slot), "hpZ: layer %d's backward gather before its forward gather", slot.layer);
    slot.work = gather_secondary(slot);
  } else {
    ZT_ASSIGN_OR_RETURN(slot.work, gather(slot.buffer, r, options_.quantized_weights));
  }
  slot.state = ParamState::kInFlight;
  return Status::OK();
}

// Parameter offload: the shard parts of the layers after the started gathers are read
// from disk ahead of use.
void ParamFetcher::prefetch_shard_parts() {
  const size_t depth = static_cast<size_t>(source_->prefetch_depth());
  for (size_t i = started_; i < sequence_.size() && i < started_ + depth; ++i) {
    const ElementRange part = own_part(range_[static_cast<size_t>(sequence_[i].layer + 1)]);
    if (part.size() > 0) source_->prefetch(part.begin, part.end);
  }
}

StatusOr<void*> ParamFetcher::acquire(int layer) {
  ZT_CHECK(next_ < sequence_.size() && sequence_[next_].layer == layer,
           "layer %d fetched out of the static order (expected layer %d)", layer,
           next_ < sequence_.size() ? sequence_[next_].layer : -2);
  Slot& slot = sequence_[next_++];
  if (slot.state == ParamState::kNotAvailable) ZT_RETURN_IF_ERROR(start(slot));
  started_ = std::max(started_, next_);
  // Prefetch: keep the following gathers in flight up to the budget (at least one).
  size_t budget = 0;
  for (size_t i = next_; i < started_; ++i) budget += range_[static_cast<size_t>(sequence_[i].layer + 1)].size();
  while (started_ < sequence_.size()) {
    const size_t elems = range_[static_cast<size_t>(sequence_[started_].layer + 1)].size();
    if (started_ > next_ && budget + elems > options_.prefetch_elems) break;
    if (!startable(sequence_[started_])) break;
    ZT_RETURN_IF_ERROR(start(sequence_[started_]));
    budget += elems;
    ++started_;
  }
  prefetch_shard_parts();
  ZT_RETURN_IF_ERROR(slot.work->wait());
  slot.work = nullptr;
  slot.state = ParamState::kAvailable;
  if (options_.hpz != nullptr && !slot.backward) save_secondary(slot);
  return slot.buffer;
}

void ParamFetcher::release(int layer) {
  for (size_t i = next_; i-- > 0;) {
    Slot& s = sequence_[i];
    if (s.layer == layer && s.state == ParamState::kAvailable) {
      give_back(s.buffer, range_[static_cast<size_t>(layer + 1)].size());
      s.buffer = nullptr;
      s.state = ParamState::kNotAvailable;
      return;
    }
  }
  ZT_CHECK(false, "release of layer %d, which is not available", layer);
}

ParamState ParamFetcher::state_of_next() const {
  return next_ < sequence_.size() ? sequence_[next_].state : ParamState::kNotAvailable;
}

Status ParamFetcher::refresh_persistent() {
  std::vector<WorkHandle> works;
  for (size_t i = 0; i < range_.size(); ++i) {
    if (!persistent_[i]) continue;
    StatusOr<WorkHandle> w = gather(persistent_copy_[i].as<void>(), range_[i], /*quantized=*/false);
    if (!w.ok()) {  // finish what was started before reporting
      for (WorkHandle& started : works) (void)started->wait();
      return w.status();
    }
    works.push_back(std::move(w).value());
  }
  for (WorkHandle& w : works) ZT_RETURN_IF_ERROR(w->wait());
  return Status::OK();
}

void* ParamFetcher::persistent_params(int layer) {
  ZT_CHECK(persistent(layer), "layer %d is not persistent", layer);
  return persistent_copy_[static_cast<size_t>(layer + 1)].as<void>();
}

}  // namespace zt
