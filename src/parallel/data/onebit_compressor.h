// OneBitCompressor: DeepSpeed's compressed all-reduce (runtime/comm/mpi.py,
// compressed_allreduce), the communication of 1-bit Adam, 0/1 Adam and 1-bit LAMB.
// Each rank's vector is cut into segments (a tensor each, or one for the whole range),
// each compressed with its own scale:
//   worker: b = x + worker_error; scale = ||b|| / sqrt(N); signs of b (0 counts as +);
//           worker_error = b - scale * sign(b); the signs travel as bits.
//   server: rank j owns chunk j of every segment: it receives the chunk's bits and scales
//           from every rank, averages m = (1/p) sum_i scale_i * sign_i + server_error,
//           compresses m the same way (its own server_error) and sends the bits and its
//           scale to every rank, which decode them: x = server_scale_j * sign.
// So every rank ends with the same vector, an estimate of the average whose error is fed
// back into the next call (error feedback on both sides). Segments are zero-padded to a
// multiple of 32 x ranks elements so chunks are whole 32-bit words.
// Wire volume per rank and call: (p-1)/p of the bits out in the exchange (send/recv,
// pairwise rounds) and the gathered server bits, about N/4 bits' worth instead of the
// 2 x 32 N bits of a ring all-reduce of floats: 1/32 of it, plus one scale per segment.
// Thread-safety: one caller; collective over the group (every rank calls all_reduce with
// the same segments).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "optim/optimizer.h"

namespace zt {

class OneBitCompressor {
 public:
  // segments: the element counts of the pieces of the vector, in order.
  OneBitCompressor(ProcessGroup* group, std::vector<size_t> segments);

  // In place: data (the segments back to back, unpadded) becomes the compressed average
  // over the group's ranks. A group of one leaves data as it is.
  Status all_reduce(float* data);
  // Zeroes both error-feedback buffers (0/1 Adam does at its variance freeze).
  void reset_errors();
  size_t elements() const { return total_; }
  size_t error_bytes() const { return (worker_error_.size() + server_error_.size()) * sizeof(float); }
  // Views of both error-feedback buffers, for checkpoints (they are this rank's own).
  std::vector<RankArray> error_arrays() {
    return {{"worker_error", worker_error_.data(), worker_error_.size(), false},
            {"server_error", server_error_.data(), server_error_.size(), false}};
  }

 private:
  void compress_worker(const float* data);
  Status exchange();
  void compress_server();
  void decode(float* data) const;

  ProcessGroup* group_;
  int p_ = 1, me_ = 0;
  std::vector<size_t> n_;       // unpadded size of each segment
  std::vector<size_t> padded_;  // padded size (multiple of 32 p)
  std::vector<size_t> offset_;  // of each segment in data
  std::vector<size_t> poffset_; // of each segment in the padded worker vector
  std::vector<size_t> word_;    // first word of each segment's chunk within a rank's block
  size_t total_ = 0;
  size_t words_ = 0;            // W: words of one rank's chunk of every segment
  std::vector<float> worker_error_;  // padded total
  std::vector<float> server_error_;  // padded total / p
  std::vector<uint32_t> send_;       // p x W: block j = my signs of chunk j
  std::vector<uint32_t> recv_;       // p x W: block i = rank i's signs of my chunk
  std::vector<uint32_t> gathered_;   // p x W: block j = server j's signs of chunk j
  std::vector<float> worker_scales_; // p x S
  std::vector<float> server_scales_; // p x S
};

}  // namespace zt
