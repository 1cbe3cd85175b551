// Bucket planning, launching and retiring.
#include "parallel/data/grad_reducer.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/check.h"

namespace zt {

namespace {
constexpr size_t kMaxBucketBuffers = 3;  // the embedding's, one being filled, one in flight

// `range` cut into maximal runs of routed experts' tensors and of the others, in order.
std::vector<std::pair<ElementRange, bool>> expert_runs(const ParamTable& table, ElementRange range) {
  std::vector<std::pair<ElementRange, bool>> runs;
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) continue;
    const bool expert = s.expert >= 0;
    if (!runs.empty() && runs.back().second == expert && runs.back().first.end == lo) {
      runs.back().first.end = hi;
    } else {
      runs.push_back({ElementRange{lo, hi}, expert});
    }
  }
  return runs;
}

// Waits for every operation; the first failure.
Status wait_all(std::vector<WorkHandle>* work) {
  Status first;
  for (WorkHandle& w : *work) {
    const Status st = w->wait();
    if (first.ok() && !st.ok()) first = st;
  }
  work->clear();
  return first;
}
}  // namespace

GradReducer::GradReducer(const ParamTable& table, const Partition& partition, ProcessGroup* dp,
                         const GradReducerOptions& options, float* full_grads, float* grad_shard)
    : partition_(partition), dp_(dp), options_(options), full_grads_(full_grads), grad_shard_(grad_shard),
      wire_(backend_or_cpu(options.backend), options.wire) {
  ZT_CHECK(shards_gradients(options.stage) ? grad_shard != nullptr : full_grads != nullptr,
           "gradient storage does not match the ZeRO stage");
  ZT_CHECK(options.expert_dp == nullptr || options.stage == ZeroStage::kNone,
           "the experts' own group is for stage 0; stages 1+ partition over it");
  ZT_CHECK(options.dense_ep == nullptr || options.stage != ZeroStage::kNone, "dense_ep is for stages 1+");
  ZT_CHECK(options.wire == CommDType::kF32 || options.wire == CommDType::kBF16 || options.wire == CommDType::kF16,
           "gradients are reduced in f32, bf16 or f16");
  ZT_CHECK(!wire_.active() || (options.expert_dp == nullptr && options.dense_ep == nullptr),
           "16-bit gradient reduction is not built with expert parallelism");
  ZT_CHECK(!options.quantized_gradients || (options.stage == ZeroStage::kParameters && !wire_.active() &&
                                            options.dense_ep == nullptr && backend().host()),
           "qgZ reduces stage 3's fp32 buckets in host memory, without expert parallelism");
  const std::vector<int> layers = table.layers();
  order_.assign(layers.rbegin(), layers.rend());
  const size_t slots = static_cast<size_t>(*std::max_element(layers.begin(), layers.end()) + 2);
  bucket_of_layer_.assign(slots, -1);
  layer_range_.resize(slots);
  for (int layer : layers) layer_range_[static_cast<size_t>(layer + 1)] = table.layer_range(layer);
  const std::vector<std::vector<int>> groups = bucket_layers(table, options.bucket_elems);
  const std::vector<ElementRange> ranges = bucket_ranges(table, groups);
  for (size_t g = 0; g < groups.size(); ++g) {
    buckets_.push_back(Bucket{ranges[g], groups[g], 0, nullptr, nullptr, {}, false, {}, nullptr});
    Bucket& b = buckets_.back();
    for (int layer : groups[g]) bucket_of_layer_[static_cast<size_t>(layer + 1)] = static_cast<int>(g);
    if (options.expert_dp != nullptr || options.dense_ep != nullptr) b.runs = expert_runs(table, b.range);
    if (options.quantized_gradients) {
      b.qgz = std::make_unique<QgzReduceScatter>(table, b.range, partition.counts(b.range), dp, options.node);
    }
  }
}

std::vector<std::vector<int>> GradReducer::bucket_layers(const ParamTable& table, size_t bucket_elems) {
  const std::vector<int> layers = table.layers();
  std::vector<std::vector<int>> groups;
  size_t filled = 0;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {  // backward completion order
    const size_t n = table.layer_range(*it).size();
    if (groups.empty() || filled + n > bucket_elems) {
      groups.emplace_back();
      filled = 0;
    }
    groups.back().push_back(*it);
    filled += n;
  }
  return groups;
}

std::vector<ElementRange> GradReducer::bucket_ranges(const ParamTable& table,
                                                     const std::vector<std::vector<int>>& groups) {
  std::vector<ElementRange> ranges;
  for (const std::vector<int>& group : groups) {
    ElementRange b = table.layer_range(group.front());  // the last layer in the arena: the bucket's end
    for (int layer : group) {
      const ElementRange r = table.layer_range(layer);
      ZT_CHECK(r.end == b.begin || layer == group.front(), "layer ranges are not adjacent");
      b.begin = std::min(b.begin, r.begin);
    }
    ranges.push_back(b);
  }
  return ranges;
}

size_t GradReducer::max_buffer_bytes(const ParamTable& table, size_t bucket_elems) {
  std::map<size_t, size_t> buckets_of_size;
  for (const ElementRange& r : bucket_ranges(table, bucket_layers(table, bucket_elems))) ++buckets_of_size[r.size()];
  size_t bytes = 0;  // buffers are pooled per size, at most kMaxBucketBuffers of each
  for (const auto& [size, count] : buckets_of_size) bytes += std::min(count, kMaxBucketBuffers) * size * sizeof(float);
  return bytes;
}

size_t GradReducer::max_qgz_bytes(const ParamTable& table, size_t bucket_elems, const Partition& partition,
                                  int dp_rank, int node_size) {
  std::vector<size_t> each;  // at most kMaxBucketBuffers buckets are in flight (their fp32 buffers)
  for (const ElementRange& r : bucket_ranges(table, bucket_layers(table, bucket_elems))) {
    each.push_back(QgzReduceScatter(table, r, partition.counts(r), dp_rank, node_size).buffer_bytes());
  }
  std::sort(each.rbegin(), each.rend());
  size_t bytes = 0;
  for (size_t i = 0; i < std::min(each.size(), kMaxBucketBuffers); ++i) bytes += each[i];
  return bytes;
}

size_t GradReducer::bucket_bytes() const { return buffers_.bytes() + wire_.pool().bytes() + qgz_peak_; }

void GradReducer::begin_micro(bool last) {
  last_micro_ = last && reduce_;
  for (Bucket& b : buckets_) {
    b.pending = static_cast<int>(b.layers.size());
    b.launched = false;
    b.work.clear();
    b.buffer = nullptr;
    b.wire = nullptr;
  }
}

// Buffers are kept per bucket size (most buckets share one size; the embeddings' may be
// larger), and at most kMaxBucketBuffers of a pool are in use at once: the oldest reduction
// is waited for first.
template <class T>
T* GradReducer::take(BucketPool<T>& pool, size_t elems, DType dtype, const char* what) {
  T* p = pool.find_free(elems);
  while (p == nullptr && pool.in_use() >= kMaxBucketBuffers && !in_flight_.empty()) {
    note(retire(*in_flight_.front()));
    p = pool.find_free(elems);
  }
  return p != nullptr ? p : pool.allocate(backend(), elems, dtype, what);
}

float* GradReducer::take_buffer(size_t elems) {
  float* p = take(buffers_, elems, DType::kF32, "a gradient bucket");
  backend().zero(p, elems * sizeof(float));
  return p;
}

float* GradReducer::acquire_layer(int layer) {
  const ElementRange r = layer_range_[static_cast<size_t>(layer + 1)];
  if (!shards_gradients(options_.stage)) return full_grads_ + r.begin;
  Bucket& b = buckets_[static_cast<size_t>(bucket_of_layer_[static_cast<size_t>(layer + 1)])];
  if (b.buffer == nullptr) b.buffer = take_buffer(b.range.size());
  return b.buffer + (r.begin - b.range.begin);
}

void GradReducer::layer_done(int layer) {
  Bucket& b = buckets_[static_cast<size_t>(bucket_of_layer_[static_cast<size_t>(layer + 1)])];
  ZT_CHECK(b.pending > 0, "layer %d reported done twice", layer);
  if (--b.pending > 0) return;
  launch(b);
  if (options_.overlap) return;
  // overlap_comm off: the bucket is reduced synchronously, as DeepSpeed does without a
  // side stream; the results are the same, only the timing differs.
  while (!in_flight_.empty()) note(retire(*in_flight_.front()));
}

void GradReducer::launch(Bucket& b) {
  if (b.launched) return;
  b.launched = true;
  const bool reduce_now = last_micro_ || shards_gradients(options_.stage);
  if (!reduce_now) return;  // stages 0-1 accumulate locally until the last micro-batch
  const ElementRange r = b.range;
  if (options_.expert_dp != nullptr) {  // expert parallelism, stage 0: experts' runs over their group
    for (const auto& [run, expert] : b.runs) {
      ProcessGroup* g = expert ? options_.expert_dp : dp_;
      b.work.push_back(g->all_reduce(full_grads_ + run.begin, run.size(), CommDType::kF32));
    }
  } else if (b.qgz != nullptr) {
    b.work.push_back(b.qgz->start(b.buffer));
    qgz_live_ += b.qgz->buffer_bytes();
    qgz_peak_ = std::max(qgz_peak_, qgz_live_);
  } else if (wire_.active()) {
    launch_16(b, shards_gradients(options_.stage) ? b.buffer : full_grads_ + r.begin);
  } else if (options_.stage == ZeroStage::kNone) {
    b.work.push_back(dp_->all_reduce(full_grads_ + r.begin, r.size(), CommDType::kF32));
  } else {
    float* data = shards_gradients(options_.stage) ? b.buffer : full_grads_ + r.begin;
    b.work.push_back(dp_->reduce_scatter(data, partition_.counts(r)));
  }
  in_flight_.push_back(&b);
}

// The bucket's fp32 sums (src, its whole range) rounded to 16 bits and reduced in 16 bits:
// all-reduced (stage 0) or reduce-scattered (stages 1+).
void GradReducer::launch_16(Bucket& b, const float* src) {
  const ElementRange r = b.range;
  b.wire = take(wire_.pool(), r.size(), wire_.storage(), "a 16-bit gradient bucket (communication_data_type)");
  wire_.narrow(b.wire, src, r.size());
  if (options_.stage == ZeroStage::kNone) {
    b.work.push_back(dp_->all_reduce(b.wire, r.size(), wire_.dtype()));
  } else {
    b.work.push_back(dp_->reduce_scatter_16(b.wire, partition_.counts(r), wire_.dtype()));
  }
}

// The reduced 16-bit values back into fp32 where the fp32 path leaves its results: the whole
// range of the full arena (stage 0), or this rank's part of the range, in the full arena
// (stage 1) or the bucket's buffer (stages 2+).
void GradReducer::widen_reduced(Bucket& b) {
  const ElementRange r = b.range;
  size_t lo = r.begin, hi = r.end;
  if (options_.stage != ZeroStage::kNone) {
    const ElementRange mine = partition_.shard(dp_->rank());
    lo = std::max(mine.begin, r.begin);
    hi = std::min(mine.end, r.end);
  }
  if (lo < hi) {
    float* dst = shards_gradients(options_.stage) ? b.buffer + (lo - r.begin) : full_grads_ + lo;
    wire_.widen(dst, b.wire + (lo - r.begin), hi - lo);
  }
  wire_.pool().give_back(b.wire, r.size());
  b.wire = nullptr;
}

Status GradReducer::retire(Bucket& b) {
  ZT_CHECK(!in_flight_.empty() && in_flight_.front() == &b, "buckets retire in launch order");
  in_flight_.pop_front();
  if (b.qgz != nullptr) qgz_live_ -= b.qgz->buffer_bytes();
  ZT_RETURN_IF_ERROR(wait_all(&b.work));
  if (b.wire != nullptr) widen_reduced(b);
  if (options_.dense_ep != nullptr) ZT_RETURN_IF_ERROR(sum_dense_over_ep(b));
  if (shards_gradients(options_.stage)) {
    // This rank's segment of the bucket now holds the sum over ranks: add it to the shard.
    const ElementRange mine = partition_.shard(dp_->rank());
    const size_t lo = std::max(mine.begin, b.range.begin), hi = std::min(mine.end, b.range.end);
    if (lo < hi) {
      const float* src = b.buffer + (lo - b.range.begin);
      float* dst = grad_shard_ + (lo - mine.begin);
      backend().ops().accumulate(dst, src, static_cast<int64_t>(hi - lo));
    }
    buffers_.give_back(b.buffer, b.range.size());
    b.buffer = nullptr;
  }
  return Status::OK();
}

// This rank's segment of the bucket holds the sum over the expert-data-parallel group; its
// non-expert runs are completed by a sum over the expert-parallel group, whose ranks all
// own the same segment of identically laid out dense tensors.
Status GradReducer::sum_dense_over_ep(const Bucket& b) {
  const ElementRange mine = partition_.shard(dp_->rank());
  const bool pooled = shards_gradients(options_.stage);  // the bucket's buffer holds b.range
  std::vector<WorkHandle> work;
  for (const auto& [run, expert] : b.runs) {
    const size_t lo = std::max(mine.begin, run.begin), hi = std::min(mine.end, run.end);
    if (expert || lo >= hi) continue;
    float* data = pooled ? b.buffer + (lo - b.range.begin) : full_grads_ + lo;
    work.push_back(options_.dense_ep->all_reduce(data, hi - lo, CommDType::kF32));
  }
  return wait_all(&work);
}

Status GradReducer::end_micro() {
  for (Bucket& b : buckets_) {
    ZT_CHECK(b.pending == 0, "a layer's gradient was never reported done");
    launch(b);  // no-op for buckets already launched
  }
  while (!in_flight_.empty()) note(retire(*in_flight_.front()));
  Status s = error_;
  error_ = Status::OK();
  return s;
}

}  // namespace zt
