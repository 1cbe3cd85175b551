// The ring algorithm over MPI point-to-point messages (CommAlgorithm::kRing) for float
// reduce-scatter, all-gather and all-reduce, as one non-blocking CommTask; and the same
// over 16-bit data (bf16 / f16 bit patterns, each hop's sum by comm/half_sum.h's rule).
//
// With N ranks, step k (0 <= k < 2N-2) sends segment (r-k-1) mod N to the right neighbour
// and receives segment (r-k-2) mod N from the left. Steps 0..N-2 are the reduce-scatter
// (the received chunk is added into the local one; after them rank r's own segment holds
// the full sum), steps N-1..2N-3 the all-gather (the received chunk overwrites the local
// one). reduce_scatter runs steps 0..N-2, all_gather steps N-1..2N-3, all_reduce all of
// them over N near-equal segments. Each segment moves in chunks of ring_chunk_bytes;
// chunk c of step k is sent as soon as chunk c of step k-1 has arrived (and been reduced),
// so transfers of later chunks overlap the reduction of earlier ones. At most two
// chunk-sized temporaries hold received data awaiting reduction.
// Determinism: the sum of segment j is accumulated along the ring from rank j+1 to rank j
// in that fixed order, then copied verbatim, so every rank ends with identical bits, on
// every run, for a given world size. Uneven and zero segment counts are allowed.
// Messages travel on the group's dedicated ring communicator (never the one user
// send/recv use) with tag = collective sequence number mod 32768, so ring traffic can
// match neither user messages nor another ring operation in flight.
// Thread-safety: the task is driven only by its group's communication thread.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm_engine.h"

namespace zt {

enum class RingPhase { kReduceScatter, kAllGather, kAllReduce };

struct RingConfig {
  MPI_Comm comm = MPI_COMM_NULL;  // the group's ring communicator
  int rank = 0;
  int size = 1;
  int tag = 0;                    // 0..32767, distinct among ring operations in flight
  size_t chunk_bytes = 1 << 20;
  std::string group;              // for messages
};

// `counts` is the segment layout (process_group.h); `data` must stay valid until done.
std::unique_ptr<CommTask> make_ring_task(RingPhase phase, float* data, std::vector<size_t> counts,
                                         const RingConfig& config);
// The 16-bit ring (dtype kBF16 or kF16).
std::unique_ptr<CommTask> make_ring_task_16(RingPhase phase, uint16_t* data, std::vector<size_t> counts,
                                            const RingConfig& config, CommDType dtype);

// all_reduce's split of `count` elements into `size` segments: the first count % size
// segments get one more element.
std::vector<size_t> ring_even_counts(size_t count, int size);

}  // namespace zt
