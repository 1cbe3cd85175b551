// ThreadWorld, its ProcessGroup (one CommEngine per rank's group, tasks from
// thread_ops.h) and run_ranks.
#include "comm/thread_world.h"

#include <algorithm>
#include <thread>

#include "comm/comm_engine.h"
#include "comm/segments.h"
#include "comm/thread_ops.h"

namespace zt {

namespace {

class ThreadProcessGroup final : public ProcessGroup {
 public:
  ThreadProcessGroup(std::shared_ptr<ThreadGroupShared> shared, int rank, int world_rank, std::string name,
                     const CommOptions& options)
      : shared_(std::move(shared)), rank_(rank) {
    EngineConfig config;
    config.rank = world_rank;
    config.group = std::move(name);
    config.options = options;
    config.policy = DeadlinePolicy::kFailWork;
    engine_ = std::make_unique<CommEngine>(std::move(config));
  }
  ~ThreadProcessGroup() override { engine_->shutdown(); }

  int rank() const override { return rank_; }
  int size() const override { return shared_->size; }
  const char* backend_name() const override { return "thread"; }

  WorkHandle all_reduce(void* data, size_t count, CommDType dtype) override {
    const size_t bytes = count * comm_dtype_size(dtype);
    check_buffer("all_reduce", data, bytes);
    ThreadCollective c;
    c.op = CommOp::kAllReduce;
    c.dtype = dtype;
    c.data = data;
    c.count = count;
    return collective(std::move(c), bytes);
  }
  WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) override {
    check_segments("reduce_scatter", data, counts, size());
    ThreadCollective c;
    c.op = CommOp::kReduceScatter;
    c.data = data;
    c.counts = counts;
    return collective(std::move(c), segment_offsets(counts).back() * sizeof(float));
  }
  WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) override {
    check_segments_16(data, counts, size(), dtype);
    ThreadCollective c;
    c.op = CommOp::kReduceScatter;
    c.dtype = dtype;
    c.data = data;
    c.counts = counts;
    return collective(std::move(c), segment_offsets(counts).back() * sizeof(uint16_t));
  }
  WorkHandle all_gather(float* data, const std::vector<size_t>& counts) override {
    check_segments("all_gather", data, counts, size());
    ThreadCollective c;
    c.op = CommOp::kAllGather;
    c.data = data;
    c.counts = counts;
    return collective(std::move(c), segment_offsets(counts).back() * sizeof(float));
  }
  WorkHandle broadcast(void* data, size_t bytes, int root) override {
    check_buffer("broadcast", data, bytes);
    check_peer("broadcast", root, size());
    ThreadCollective c;
    c.op = CommOp::kBroadcast;
    c.data = data;
    c.count = bytes;
    c.root = root;
    return collective(std::move(c), bytes);
  }
  WorkHandle send(const void* data, size_t bytes, int dst, int tag) override {
    check_buffer("send", data, bytes);
    check_peer("send", dst, size());
    return submit(CommOp::kSend, bytes, make_thread_send(shared_, rank_, dst, tag, data, bytes));
  }
  WorkHandle recv(void* data, size_t bytes, int src, int tag) override {
    check_buffer("recv", data, bytes);
    check_peer("recv", src, size());
    return submit(CommOp::kRecv, bytes, make_thread_recv(shared_, src, rank_, tag, data, bytes));
  }
  WorkHandle barrier() override {
    ThreadCollective c;
    c.op = CommOp::kBarrier;
    return collective(std::move(c), 0);
  }

  void set_step(int64_t step) override { engine_->set_step(step); }
  void set_phase(const char* phase) override { engine_->set_phase(phase); }
  void set_memory_domain(MemoryDomain* domain) override { engine_->set_memory_domain(domain); }
  bool works_in_memory_domains() const override { return true; }
  CommStats stats() const override { return engine_->stats(); }
  void reset_stats() override { engine_->reset_stats(); }
  void abandon(const Status& why) override { engine_->abandon(why); }

 private:
  WorkHandle collective(ThreadCollective call, size_t bytes) {
    const CommOp op = call.op;
    return submit(op, bytes, make_thread_collective(shared_, rank_, coll_seq_++, std::move(call)));
  }
  WorkHandle submit(CommOp op, size_t bytes, std::unique_ptr<CommTask> task) {
    OpInfo info;
    info.op = op;
    info.bytes = static_cast<int64_t>(bytes);
    info.logical_bytes = logical_bytes_of(op, info.bytes);
    return engine_->submit(info, std::move(task));
  }

  std::shared_ptr<ThreadGroupShared> shared_;
  int rank_;
  int64_t coll_seq_ = 0;  // collectives only: identical on every rank
  std::unique_ptr<CommEngine> engine_;
};

}  // namespace

ThreadWorld::ThreadWorld(int size, const CommOptions& options) : size_(size), options_(options) {
  ZT_CHECK(size >= 1, "ThreadWorld of %d ranks", size);
}

ThreadWorld::~ThreadWorld() = default;

std::unique_ptr<ProcessGroup> ThreadWorld::group(int rank) {
  std::vector<int> all(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) all[r] = r;
  return subgroup(all, rank);
}

std::unique_ptr<ProcessGroup> ThreadWorld::subgroup(const std::vector<int>& world_ranks, int world_rank) {
  const auto it = std::find(world_ranks.begin(), world_ranks.end(), world_rank);
  ZT_CHECK(it != world_ranks.end(), "subgroup: world rank %d is not a member", world_rank);
  for (int r : world_ranks) ZT_CHECK(r >= 0 && r < size_, "subgroup: world rank %d outside a world of %d", r, size_);
  std::shared_ptr<ThreadGroupShared> shared;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t k = joined_[{world_ranks, world_rank}]++;
    auto& list = groups_[world_ranks];
    while (list.size() <= k) list.push_back(std::make_shared<ThreadGroupShared>(static_cast<int>(world_ranks.size())));
    shared = list[k];
  }
  std::string name;
  if (static_cast<int>(world_ranks.size()) != size_ || !std::is_sorted(world_ranks.begin(), world_ranks.end())) {
    name = "subgroup [";
    for (size_t i = 0; i < world_ranks.size(); ++i) name += (i ? ", " : "") + std::to_string(world_ranks[i]);
    name += "]";
  }
  return std::make_unique<ThreadProcessGroup>(std::move(shared), static_cast<int>(it - world_ranks.begin()),
                                              world_rank, std::move(name), options_);
}

Status run_ranks(int size, const std::function<Status(int rank)>& fn) {
  std::vector<Status> results(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) threads.emplace_back([&, r] { results[r] = fn(r); });
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace zt
