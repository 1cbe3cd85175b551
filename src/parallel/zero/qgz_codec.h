// ZeRO++'s quantized gradients (qgZ, `zero_quantized_gradients`): the wire form of a range of
// the gradient arena, as quantized_reduce.h exchanges it.
//
// Which tensors: every tensor of two or more dimensions travels as int4; 1-D tensors (biases,
// norms) travel exact, in fp32, as DeepSpeed sends them through its plain reduce-scatter.
// Rounding, as DeepSpeed's symmetric 4-bit quantizer (csrc/includes/quantization_utils.h):
// per group, absmax = max |x|; scale = 2^4 / (2 absmax) (1 when absmax is 0); q =
// clamp(round_half_even(x scale), -8, 7); the wire keeps 1 / scale, and x' = q / scale.
// Error: |x - x'| <= absmax / 16 where |x scale| <= 7.5, and <= absmax / 8 for the top half
// step that clamps to 7 (x within absmax / 16 of +absmax): one group's bound is absmax / 8,
// plus 4 fp32 roundings of 2^-24 absmax (scale, its inverse, x scale and q / scale).
// Groups: DeepSpeed's count for a tensor of shape (rows, cols, ...) in a group of `world`
// ranks, max(rows, cols..., world) groups, so G = ceil(numel / groups) elements each
// (qgz_group_size). Groups are aligned on the tensor: group k is its elements [kG, (k+1)G),
// clipped to the piece a message carries, so a group never depends on how the ranks cut the
// arena. (DeepSpeed groups the swizzled tensor instead, and skips quantization for tensors
// not divisible by 2 world because its all-to-all needs equal chunks; zerotrain's messages
// carry their own sizes, so every tensor of 2+ dimensions is quantized.)
// Wire of a segment: its pieces (the segment cut at tensor boundaries) in arena order, each
// 4-byte aligned: an exact piece is its n floats; a quantized piece is one fp32 1 / scale per
// group it touches, then its n nibbles (element i in byte i / 2, the low nibble first, two's
// complement), padded to 4 bytes. About n / 2 + 4 n / G bytes against 4 n in fp32.
// Thread-safety: immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/tensor_spec.h"

namespace zt {

// The quantization group size of a tensor in a group of `world` ranks (0: 1-D, sent exact).
size_t qgz_group_size(const TensorSpec& spec, int world);
// Groups touched by n elements starting at tensor element `first`, for group size `group`.
size_t qgz_groups_in(size_t first, size_t n, size_t group);

// int4: n values starting at tensor element `first` into nibbles ((n + 1) / 2 bytes) and one
// 1 / scale per group touched; and back (add: x += the value, else x = it).
void qgz_quantize(const float* x, size_t n, size_t first, size_t group, uint8_t* nibbles, float* inv_scales);
void qgz_dequantize(const uint8_t* nibbles, const float* inv_scales, size_t n, size_t first, size_t group, float* x,
                    bool add);

// A run of one tensor's elements within a range of the arena.
struct QgzPiece {
  ElementRange elems;        // arena elements
  size_t group = 0;          // quantization group size; 0: exact (fp32)
  size_t tensor_offset = 0;  // the tensor's first arena element (groups start there)
};

// The codec of one gradient bucket: arena range `range`, a group of `world` ranks.
class QgzCodec {
 public:
  QgzCodec(const ParamTable& table, ElementRange range, int world);

  ElementRange range() const { return range_; }
  // `seg` (within range()) cut at tensor boundaries.
  std::vector<QgzPiece> pieces(ElementRange seg) const;
  size_t wire_bytes(ElementRange seg) const;
  // Writes the values of `seg` into out; `bucket` holds range(). Returns the bytes written
  // (wire_bytes(seg)).
  size_t encode(const float* bucket, ElementRange seg, uint8_t* out) const;
  // The values of `seg` from `in` into bucket (add: bucket += them, element by element).
  // Returns the bytes read (wire_bytes(seg)).
  size_t decode(const uint8_t* in, ElementRange seg, float* bucket, bool add) const;

 private:
  ElementRange range_;
  std::vector<QgzPiece> tensors_;  // each tensor crossing range_, clipped to it
};

}  // namespace zt
