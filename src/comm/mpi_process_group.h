// MpiProcessGroup: ProcessGroup over one MPI communicator (see mpi_world.h for the
// lifecycle). CommAlgorithm::kMpi runs the library's non-blocking collectives;
// kRing runs comm/ring.h for float and 16-bit all_reduce and reduce_scatter and float
// all_gather (F64/I64 all_reduce always goes to MPI_Iallreduce; 16-bit data under kMpi
// reduce with a user MPI_Op of comm/half_sum.h's rule). MpiRegistry lets the MpiWorld release every
// live group before MPI_Finalize.
// Thread-safety: per process_group.h; release() under the registry's mutex only.
#pragma once

#include <mpi.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "comm/comm_engine.h"
#include "comm/ring.h"

namespace zt {

class MpiProcessGroup;

struct MpiRegistry {
  std::mutex mu;
  std::set<MpiProcessGroup*> live;  // guarded by mu
  bool finalized = false;           // guarded by mu
};

class MpiProcessGroup final : public ProcessGroup {
 public:
  // Takes ownership of `comm` (freed on release). `name` is "world" or the split's name.
  static StatusOr<std::unique_ptr<MpiProcessGroup>> create(MPI_Comm comm, std::string name,
                                                           const CommOptions& options,
                                                           std::shared_ptr<MpiRegistry> registry);
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend_name() const override { return "mpi"; }

  WorkHandle all_reduce(void* data, size_t count, CommDType dtype) override;
  WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) override;
  WorkHandle all_gather(float* data, const std::vector<size_t>& counts) override;
  WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) override;
  WorkHandle broadcast(void* data, size_t bytes, int root) override;
  WorkHandle send(const void* data, size_t bytes, int dst, int tag) override;
  WorkHandle recv(void* data, size_t bytes, int src, int tag) override;
  WorkHandle barrier() override;
  // kMpi: MPI_Ialltoallv; kRing: zerotrain's own exchange (ProcessGroup's default).
  WorkHandle all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                        const std::vector<size_t>& recv_bytes) override;

  void set_step(int64_t step) override { engine_->set_step(step); }
  void set_phase(const char* phase) override { engine_->set_phase(phase); }
  void set_memory_domain(MemoryDomain* domain) override { engine_->set_memory_domain(domain); }
  CommStats stats() const override { return engine_->stats(); }
  void reset_stats() override { engine_->reset_stats(); }
  void abandon(const Status& why) override;  // abort_mpi_job(why): MPI requests cannot be withdrawn

  // Drains and stops the communication thread and frees the communicators. Idempotent;
  // the caller holds the registry's mutex.
  void release();

 private:
  struct Ranks {
    int rank = 0, size = 1, world_rank = 0, tag_ub = 32767;
  };
  MpiProcessGroup(MPI_Comm comm, MPI_Comm ring_comm, std::string name, const CommOptions& options, const Ranks& ranks,
                  std::shared_ptr<MpiRegistry> registry);
  WorkHandle submit(CommOp op, size_t bytes, std::unique_ptr<CommTask> task);
  std::unique_ptr<CommTask> mpi_task(const char* call, std::function<int(MPI_Comm, MPI_Request*)> start,
                                     std::function<void()> on_done = {});
  std::unique_ptr<CommTask> ring_task(RingPhase phase, float* data, std::vector<size_t> counts);
  RingConfig ring_config();  // the next ring operation's (its tag advances)
  WorkHandle mpi_reduce_scatter(void* data, const std::vector<size_t>& counts, CommDType dtype);
  bool use_ring() const { return options_.algorithm == CommAlgorithm::kRing && size_ > 1; }

  MPI_Comm comm_;
  MPI_Comm ring_comm_;
  std::string name_;
  CommOptions options_;
  std::shared_ptr<MpiRegistry> registry_;
  int rank_, size_, world_rank_;
  int tag_ub_;
  int64_t ring_seq_ = 0;  // collective counter: identical on every rank, unlike op sequence numbers
  bool released_ = false;
  std::unique_ptr<CommEngine> engine_;
};

}  // namespace zt
