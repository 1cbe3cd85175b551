// Host-staged process groups (see the header): a pool of host buffers, the staged Work
// that copies results back in wait(), and one staging rule per operation (which bytes it
// reads before, which it writes after).
#include "backend/staged_process_group.h"

#include <mutex>
#include <numeric>
#include <utility>

#include "comm/comm_engine.h"
#include "comm/segments.h"

namespace zt {

bool needs_host_staging(const ProcessGroup& group, const Backend& backend) {
  if (backend.host() || !group.touches_buffers() || group.moves_device_memory()) return false;
  return backend.memory_domain() == nullptr || !group.works_in_memory_domains();
}

namespace {

// Reusable host buffers of the backend's staging host: the smallest free one that fits,
// else a new one (the pool holds at most what was in flight at once).
class HostPool {
 public:
  explicit HostPool(const Backend& host) : host_(host) {}
  StatusOr<Arena> take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.lower_bound(bytes);
      if (it != free_.end()) {
        Arena a = std::move(it->second);
        free_.erase(it);
        return a;
      }
    }
    return host_.allocate((bytes + 3) / 4, DType::kF32, "a host-staged collective's buffer");
  }
  void give(Arena a) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t bytes = a.bytes();
    free_.emplace(bytes, std::move(a));
  }

 private:
  const Backend& host_;
  std::mutex mu_;
  std::multimap<size_t, Arena> free_;  // by size in bytes
};

// Bytes of backend memory at `dev` and of the host buffer at `at`.
struct Crossing {
  void* dev;
  size_t at;
  size_t bytes;
};

// The inner operation on the host buffer; wait() lands `writes` in backend memory.
class StagedWork final : public Work {
 public:
  StagedWork(WorkHandle inner, std::shared_ptr<HostPool> pool, Arena buf, const Backend& b, std::vector<Crossing> writes)
      : inner_(std::move(inner)), pool_(std::move(pool)), buf_(std::move(buf)), b_(b), writes_(std::move(writes)) {}
  ~StagedWork() override {
    if (done_) return;
    (void)inner_->wait();  // the host group may still use the buffer
    pool_->give(std::move(buf_));
  }
  Status wait() override {
    if (done_) return status_;
    status_ = inner_->wait();
    if (status_.ok()) {
      for (const Crossing& c : writes_) b_.copy_from_host(c.dev, buf_.as<char>() + c.at, c.bytes);
    }
    done_ = true;
    pool_->give(std::move(buf_));
    return status_;
  }
  bool completed() const override { return done_ || inner_->completed(); }

 private:
  WorkHandle inner_;
  std::shared_ptr<HostPool> pool_;
  Arena buf_;
  const Backend& b_;
  std::vector<Crossing> writes_;
  bool done_ = false;
  Status status_;
};

size_t total_of(const std::vector<size_t>& counts) { return std::accumulate(counts.begin(), counts.end(), size_t{0}); }

class StagedProcessGroup final : public ProcessGroup {
 public:
  StagedProcessGroup(ProcessGroup& inner, const Backend& b)
      : inner_(inner), b_(b), pool_(std::make_shared<HostPool>(b.staging_host())) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  const char* backend_name() const override { return inner_.backend_name(); }
  bool works_in_memory_domains() const override { return false; }

  WorkHandle all_reduce(void* data, size_t count, CommDType dtype) override {
    const size_t bytes = count * comm_dtype_size(dtype);
    if (!held(data)) return inner_.all_reduce(data, count, dtype);
    return stage(bytes, {{data, 0, bytes}}, {{data, 0, bytes}}, [&](char* h) { return inner_.all_reduce(h, count, dtype); });
  }
  WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) override {
    if (!held(data)) return inner_.reduce_scatter(data, counts);
    return stage_segments(data, counts, sizeof(float), /*gather=*/false,
                          [&](char* h) { return inner_.reduce_scatter(reinterpret_cast<float*>(h), counts); });
  }
  WorkHandle all_gather(float* data, const std::vector<size_t>& counts) override {
    if (!held(data)) return inner_.all_gather(data, counts);
    return stage_segments(data, counts, sizeof(float), /*gather=*/true,
                          [&](char* h) { return inner_.all_gather(reinterpret_cast<float*>(h), counts); });
  }
  WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) override {
    if (!held(data)) return inner_.reduce_scatter_16(data, counts, dtype);
    return stage_segments(data, counts, sizeof(uint16_t), /*gather=*/false, [&](char* h) {
      return inner_.reduce_scatter_16(reinterpret_cast<uint16_t*>(h), counts, dtype);
    });
  }
  WorkHandle broadcast(void* data, size_t bytes, int root) override {
    if (!held(data)) return inner_.broadcast(data, bytes, root);
    const bool mine = rank() == root;
    return stage(bytes, mine ? std::vector<Crossing>{{data, 0, bytes}} : std::vector<Crossing>{},
                 mine ? std::vector<Crossing>{} : std::vector<Crossing>{{data, 0, bytes}},
                 [&](char* h) { return inner_.broadcast(h, bytes, root); });
  }
  WorkHandle send(const void* data, size_t bytes, int dst, int tag) override {
    if (!held(data)) return inner_.send(data, bytes, dst, tag);
    return stage(bytes, {{const_cast<void*>(data), 0, bytes}}, {}, [&](char* h) { return inner_.send(h, bytes, dst, tag); });
  }
  WorkHandle recv(void* data, size_t bytes, int src, int tag) override {
    if (!held(data)) return inner_.recv(data, bytes, src, tag);
    return stage(bytes, {}, {{data, 0, bytes}}, [&](char* h) { return inner_.recv(h, bytes, src, tag); });
  }
  WorkHandle barrier() override { return inner_.barrier(); }
  WorkHandle all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                        const std::vector<size_t>& recv_bytes) override;

  void set_step(int64_t step) override { inner_.set_step(step); }
  void set_phase(const char* phase) override { inner_.set_phase(phase); }
  void set_memory_domain(MemoryDomain*) override {}  // the host group moves host buffers only
  CommStats stats() const override { return inner_.stats(); }
  const ProcessGroup* stats_owner() const override { return inner_.stats_owner(); }
  void reset_stats() override { inner_.reset_stats(); }
  void abandon(const Status& why) override { inner_.abandon(why); }

 private:
  bool held(const void* p) const { return p != nullptr && b_.in_backend_memory(p); }
  // A host buffer of `bytes`: `reads` copied in, run(buffer) issued, `writes` copied back at wait().
  template <typename Run>
  WorkHandle stage(size_t bytes, const std::vector<Crossing>& reads, std::vector<Crossing> writes, Run run) {
    StatusOr<Arena> buf = pool_->take(bytes);
    if (!buf.ok()) {  // the peers are entering this collective: they must not wait for it
      inner_.abandon(buf.status());  // (an MPI group ends the job here, with the reason)
      return make_completed_work(buf.status());
    }
    char* h = buf.value().as<char>();
    for (const Crossing& c : reads) b_.copy_to_host(h + c.at, c.dev, c.bytes);
    WorkHandle inner = run(h);
    return std::make_shared<StagedWork>(std::move(inner), pool_, std::move(buf).value(), b_, std::move(writes));
  }
  // reduce-scatter: the whole buffer in, this rank's segment back; all-gather: the reverse.
  template <typename Run>
  WorkHandle stage_segments(void* data, const std::vector<size_t>& counts, size_t elem, bool gather, Run run) {
    check_segments(gather ? "all_gather" : "reduce_scatter", data, counts, size());
    const std::vector<size_t> off = segment_offsets(counts);
    const size_t me = static_cast<size_t>(rank());
    const Crossing whole{data, 0, off.back() * elem};
    const Crossing own{static_cast<char*>(data) + off[me] * elem, off[me] * elem, counts[me] * elem};
    return gather ? stage(whole.bytes, {own}, {whole}, run) : stage(whole.bytes, {whole}, {own}, run);
  }

  ProcessGroup& inner_;
  const Backend& b_;
  std::shared_ptr<HostPool> pool_;
};

// Each side staged where it lies in backend memory: send's bytes in at [0, S), recv's
// back from [S, S + R) (or from 0 when send is host memory).
WorkHandle StagedProcessGroup::all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                                          const std::vector<size_t>& recv_bytes) {
  const bool s_held = held(send), r_held = held(recv);
  if (!s_held && !r_held) return inner_.all_to_all(send, send_bytes, recv, recv_bytes);
  const size_t S = s_held ? total_of(send_bytes) : 0, R = r_held ? total_of(recv_bytes) : 0;
  std::vector<Crossing> in, out;
  if (s_held) in.push_back({const_cast<void*>(send), 0, S});
  if (r_held) out.push_back({recv, S, R});
  return stage(S + R, in, out, [&](char* h) {
    return inner_.all_to_all(s_held ? h : send, send_bytes, r_held ? h + S : recv, recv_bytes);
  });
}

}  // namespace

std::unique_ptr<ProcessGroup> make_staged_process_group(ProcessGroup& inner, const Backend& backend) {
  return std::make_unique<StagedProcessGroup>(inner, backend);
}

ProcessGroup* StagedGroups::wrap(ProcessGroup* g) {
  if (g == nullptr || !needs_host_staging(*g, backend_)) return g;
  std::unique_ptr<ProcessGroup>& s = staged_[g];
  if (s == nullptr) s = make_staged_process_group(*g, backend_);
  return s.get();
}

}  // namespace zt
