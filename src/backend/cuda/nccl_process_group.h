// NcclProcessGroup: the collectives of data parallelism and ZeRO (all-reduce,
// reduce-scatter, all-gather, broadcast, barrier) on GPU memory through NCCL, one GPU per
// rank. The communicator is made over a host group of the same ranks (its rank 0's
// ncclUniqueId is broadcast over it), so any subgroup gets its own.
// Ordering: every operation runs on the group's one NCCL stream (NCCL asks for one order
// per communicator, and zerotrain issues collectives in a static order), after the
// kernels queued so far on the backend's compute stream (an event). wait() returns when
// the operation is done on the device.
// Deadlines: the communicator is non-blocking; wait() polls it and the operation's event,
// and past CommOptions::timeout_s aborts the communicator and returns DeadlineExceeded
// naming the rank, step, operation, sequence number, bytes and elapsed time, as the host
// groups do. An NCCL error is returned the same way, with NCCL's message. Over an MPI host
// group (a launched job) either one instead stops the whole job with that message, as the
// MPI backend does (abort_mpi_job: exit 75 on a deadline), so that no peer waits out its
// own deadline or blocks in a CUDA call behind a kernel waiting for the rank that failed,
// and a failed ncclCommInitRankConfig stops every rank at once. After an
// abort (a deadline, an error, or abandon()), every operation not yet waited fails: NCCL's
// abort ends the kernels early, so their events would otherwise read complete. The
// communicator is destroyed only when it is clean and idle; otherwise it is aborted.
// Host buffers (a stack scalar) are copied to device scratch and back around the
// operation. Segments of unequal sizes (ZeRO's shorter last shard) run as one NCCL group
// of per-owner reduces or broadcasts; equal ones as NCCL's reduce-scatter and all-gather.
// Not carried: send, recv and all-to-all (NCCL has no tags; pipeline hand-offs and MoE's
// exchange stay on the host-staged group), which fail naming this.
// Determinism: NCCL's reductions are in a fixed order for a given communicator and
// message size, so two runs give the same bits; they are not the CPU ring's bits.
// Two ranks on one GPU: NCCL 2.28 refuses them ("Duplicate GPU"); 2.30 and later allow
// them with NCCL_MULTI_RANK_GPU_ENABLE=1.
// Thread-safety: as ProcessGroup (one issuing thread).
#pragma once

#include <memory>

#include "comm/process_group.h"

namespace zt::cuda {

struct NcclOptions {
  // Every reduce-scatter and all-gather as the group of per-owner reduces / broadcasts
  // that unequal segments take, so that path runs at world 1 too (the tests).
  bool always_grouped = false;
};

// A communicator over the ranks of `host` (a collective over it: every rank calls this in
// the same order); `host` only carries the id. REQUIRES: the CUDA backend's context
// exists (its device is this rank's GPU).
StatusOr<std::unique_ptr<ProcessGroup>> make_nccl_process_group(ProcessGroup& host, const CommOptions& options,
                                                                const NcclOptions& nccl = {});

// NCCL's version (22809 for 2.28.9), or 0 when libnccl.so.2 is not loadable.
int loaded_nccl_version();

}  // namespace zt::cuda
