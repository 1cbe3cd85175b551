// qgZ's int4 quantizer and the wire form of a bucket's segments (see qgz_codec.h).
#include "parallel/zero/qgz_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"

namespace zt {

namespace {

size_t round4(size_t bytes) { return (bytes + 3) / 4 * 4; }

size_t piece_bytes(const QgzPiece& p) {
  const size_t n = p.elems.size();
  if (p.group == 0) return n * sizeof(float);
  return qgz_groups_in(p.elems.begin - p.tensor_offset, n, p.group) * sizeof(float) + round4((n + 1) / 2);
}

// Calls f(lo, hi, k) for each group's part of [first, first + n), lo/hi relative to x.
template <class F>
void for_each_group(size_t first, size_t n, size_t group, F f) {
  size_t k = 0;
  for (size_t lo = 0; lo < n; ++k) {
    const size_t hi = std::min(n, ((first + lo) / group + 1) * group - first);
    f(lo, hi, k);
    lo = hi;
  }
}

}  // namespace

size_t qgz_group_size(const TensorSpec& spec, int world) {
  if (spec.shape.size() < 2 || spec.numel == 0) return 0;
  const size_t rows = static_cast<size_t>(spec.shape[0]), cols = spec.numel / rows;
  const size_t groups = std::max({rows, cols, static_cast<size_t>(std::max(1, world))});
  return (spec.numel + groups - 1) / groups;
}

size_t qgz_groups_in(size_t first, size_t n, size_t group) {
  return n == 0 ? 0 : (first + n - 1) / group - first / group + 1;
}

void qgz_quantize(const float* x, size_t n, size_t first, size_t group, uint8_t* nibbles, float* inv_scales) {
  std::memset(nibbles, 0, (n + 1) / 2);
  for_each_group(first, n, group, [&](size_t lo, size_t hi, size_t k) {
    float absmax = 0.0f;
    for (size_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    const float scale = absmax == 0.0f ? 1.0f : 16.0f / (2.0f * absmax);
    for (size_t i = lo; i < hi; ++i) {
      const float v = std::min(7.0f, std::max(-8.0f, std::nearbyint(x[i] * scale)));  // half to even
      const auto q = static_cast<uint8_t>(static_cast<int>(v) & 0xF);
      nibbles[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? q : q << 4);
    }
    inv_scales[k] = 1.0f / scale;
  });
}

void qgz_dequantize(const uint8_t* nibbles, const float* inv_scales, size_t n, size_t first, size_t group, float* x,
                    bool add) {
  for_each_group(first, n, group, [&](size_t lo, size_t hi, size_t k) {
    for (size_t i = lo; i < hi; ++i) {
      const int nib = (nibbles[i / 2] >> (i % 2 == 0 ? 0 : 4)) & 0xF;
      const float v = static_cast<float>(nib >= 8 ? nib - 16 : nib) * inv_scales[k];
      x[i] = add ? x[i] + v : v;
    }
  });
}

QgzCodec::QgzCodec(const ParamTable& table, ElementRange range, int world) : range_(range) {
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo < hi) tensors_.push_back(QgzPiece{ElementRange{lo, hi}, qgz_group_size(s, world), s.offset});
  }
}

std::vector<QgzPiece> QgzCodec::pieces(ElementRange seg) const {
  ZT_CHECK(seg.begin >= range_.begin && seg.end <= range_.end, "qgZ: a segment outside its bucket");
  std::vector<QgzPiece> out;
  for (const QgzPiece& t : tensors_) {
    const size_t lo = std::max(t.elems.begin, seg.begin), hi = std::min(t.elems.end, seg.end);
    if (lo < hi) out.push_back(QgzPiece{ElementRange{lo, hi}, t.group, t.tensor_offset});
  }
  return out;
}

size_t QgzCodec::wire_bytes(ElementRange seg) const {
  size_t bytes = 0;
  for (const QgzPiece& p : pieces(seg)) bytes += piece_bytes(p);
  return bytes;
}

size_t QgzCodec::encode(const float* bucket, ElementRange seg, uint8_t* out) const {
  const uint8_t* const start = out;
  for (const QgzPiece& p : pieces(seg)) {
    const float* x = bucket + (p.elems.begin - range_.begin);
    const size_t n = p.elems.size(), first = p.elems.begin - p.tensor_offset;
    if (p.group == 0) {
      std::memcpy(out, x, n * sizeof(float));
    } else {
      const size_t groups = qgz_groups_in(first, n, p.group);
      std::vector<float> inv(groups);
      qgz_quantize(x, n, first, p.group, out + groups * sizeof(float), inv.data());
      std::memcpy(out, inv.data(), groups * sizeof(float));
    }
    out += piece_bytes(p);
  }
  return static_cast<size_t>(out - start);
}

size_t QgzCodec::decode(const uint8_t* in, ElementRange seg, float* bucket, bool add) const {
  const uint8_t* const start = in;
  std::vector<float> buf;
  for (const QgzPiece& p : pieces(seg)) {
    float* x = bucket + (p.elems.begin - range_.begin);
    const size_t n = p.elems.size(), first = p.elems.begin - p.tensor_offset;
    if (p.group == 0) {
      buf.resize(n);
      std::memcpy(buf.data(), in, n * sizeof(float));
      for (size_t i = 0; i < n; ++i) x[i] = add ? x[i] + buf[i] : buf[i];
    } else {
      const size_t groups = qgz_groups_in(first, n, p.group);
      buf.resize(groups);
      std::memcpy(buf.data(), in, groups * sizeof(float));
      qgz_dequantize(in + groups * sizeof(float), buf.data(), n, first, p.group, x, add);
    }
    in += piece_bytes(p);
  }
  return static_cast<size_t>(in - start);
}

}  // namespace zt
