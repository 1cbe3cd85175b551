// ZeRO++'s quantized gradient reduce-scatter (qgZ, `zero_quantized_gradients`) of one
// gradient bucket, after DeepSpeed's all_to_all_quant_reduce (runtime/comm/
// coalesced_collectives.py): all-to-alls of int4 values (qgz_codec.h) in place of the
// reduce-scatter, so a rank's segment of the bucket ends as the sum over the dp group.
//
// The bucket's range is cut into the dp group's segments (partition.h: segment d is dp
// rank d's). Two levels when a node group is given (ZeRO++ hpZ's group: L consecutive dp
// ranks, N = dp / L nodes, dp rank = n L + l):
//   1. within the node: rank (n, l) sends local peer l' the segments of ranks (n', l'),
//      every n', quantized; each rank dequantizes the L copies it receives of the
//      segments of ranks (n', l) and sums them in local-rank order: the node's sums;
//   2. across nodes: it requantizes the node's sum of segment (n', l) and sends it to
//      rank (n', l) (the other dp ranks get nothing); each rank dequantizes the N node
//      sums of its own segment and adds them in node order.
// The second level runs over the dp group, so its bytes are the ones that leave the node;
// the first runs over the node group. One level (no node group, or one node): every rank
// sends rank d its segment quantized, and each rank adds the dp copies of its segment in
// rank order. Every value that travels is quantized, a rank's own segment too (it passes
// through the all-to-all to itself, as in DeepSpeed), so the result does not depend on
// which rank owns a segment; the sums are fp32 and their order is fixed: every run on the
// same gradients gives the same bits.
// Error of one element of the sum, against the exact sum of the ranks' values g_r: each
// quantization is within absmax / 8 of its group (qgz_codec.h), so one level adds at most
// sum_r absmax_r / 8, and two levels also sum_n absmax(S_n) / 8 for the node sums S_n; plus
// the fp32 additions' roundings (dp - 1 of at most 2^-24 of the partial sums).
// Buffers: the encoded send and receive bytes of both levels, held by the work until it is
// waited for (buffer_bytes()). The second level starts when the work is waited for.
// Host memory only. Thread-safety: one training thread per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/process_group.h"
#include "parallel/zero/qgz_codec.h"
#include "tensor/tensor_spec.h"

namespace zt {

// One all-to-all of a quantized reduction, as seen from this rank.
struct QgzLevel {
  ProcessGroup* group = nullptr;
  std::vector<std::vector<ElementRange>> send;  // per group rank: the segments this rank sends it
  std::vector<ElementRange> recv;               // the segments each sender sends this rank
  std::vector<bool> from;                       // per group rank: whether it sends them
  // Their encoded sizes, fixed by the plan: per group rank, and of one sender's recv.
  std::vector<size_t> send_bytes, recv_bytes;
};

class QgzReduceScatter {
 public:
  // range: the bucket's arena range; counts: its elements per dp rank (Partition::counts);
  // node: this rank's node group (null, or of dp's size: one level).
  QgzReduceScatter(const ParamTable& table, ElementRange range, const std::vector<size_t>& counts, ProcessGroup* dp,
                   ProcessGroup* node);
  // As above with group sizes and ranks only (no group): for the memory estimate.
  QgzReduceScatter(const ParamTable& table, ElementRange range, const std::vector<size_t>& counts, int dp_rank,
                   int node_size);

  // Starts the reduction of `bucket` (this rank's gradients over the range). When the work
  // is waited for, this rank's segment of bucket holds the sum over dp (other elements of
  // the bucket are overwritten with partial sums).
  WorkHandle start(float* bucket) const;
  // Bytes of the send and receive buffers of both levels.
  size_t buffer_bytes() const { return buffer_bytes_; }
  const std::vector<QgzLevel>& levels() const { return levels_; }

 private:
  void plan(const std::vector<size_t>& counts, int dp_rank, int node_size);
  void size_levels();
  QgzCodec codec_;
  std::vector<QgzLevel> levels_;
  size_t buffer_bytes_ = 0;
};

}  // namespace zt
