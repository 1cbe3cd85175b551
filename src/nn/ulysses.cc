// Ulysses' exchange: pack each peer's part contiguously, one all-to-all, unpack.
#include "nn/ulysses.h"

#include <cstdint>
#include <vector>

namespace zt {

namespace {

// Byte geometry of one exchange: P peers, Cs-wide pieces, seg bytes per peer.
struct Geometry {
  int P;
  size_t e, piece, row_local, seg;  // element, Cs piece, a (t, all W) row of the head layout, per-peer segment
  Geometry(const ProcessGroup& g, size_t elem_bytes, const UlyssesShape& s)
      : P(g.size()), e(elem_bytes) {
    piece = static_cast<size_t>(s.C / P) * e;
    row_local = piece * static_cast<size_t>(s.W);
    seg = row_local * static_cast<size_t>(s.B) * static_cast<size_t>(s.Tl);
  }
};

// (b, t, w) of the sequence layout, peer q's piece <-> its place in a peer segment.
void scatter_pieces(const Backend& be, unsigned char* seq, unsigned char* segs, const Geometry& g,
                    const UlyssesShape& s, bool to_segments) {
  const size_t row = static_cast<size_t>(s.W) * static_cast<size_t>(s.C) * g.e;  // a full-width token row
  for (int q = 0; q < g.P; ++q) {
    for (int64_t bt = 0; bt < static_cast<int64_t>(s.B) * s.Tl; ++bt) {
      for (int w = 0; w < s.W; ++w) {
        unsigned char* a = seq + static_cast<size_t>(bt) * row + static_cast<size_t>(w) * s.C * g.e + q * g.piece;
        unsigned char* b = segs + q * g.seg + static_cast<size_t>(bt) * g.row_local + static_cast<size_t>(w) * g.piece;
        if (to_segments) {
          be.copy(b, a, g.piece);
        } else {
          be.copy(a, b, g.piece);
        }
      }
    }
  }
}

// Peer q's Tl tokens of sequence b <-> rows [q Tl, (q+1) Tl) of sequence b in the head layout.
void move_blocks(const Backend& be, unsigned char* heads, unsigned char* segs, const Geometry& g, const UlyssesShape& s,
                 bool to_segments) {
  const size_t block = g.row_local * static_cast<size_t>(s.Tl);
  for (int q = 0; q < g.P; ++q) {
    for (int b = 0; b < s.B; ++b) {
      unsigned char* h = heads + (static_cast<size_t>(b) * g.P + q) * block;
      unsigned char* seg = segs + q * g.seg + static_cast<size_t>(b) * block;
      if (to_segments) {
        be.copy(seg, h, block);
      } else {
        be.copy(h, seg, block);
      }
    }
  }
}

Status exchange(ProcessGroup& sp, const void* send, void* recv, const Geometry& g) {
  const std::vector<size_t> bytes(static_cast<size_t>(g.P), g.seg);
  return sp.all_to_all(send, bytes, recv, bytes)->wait();
}

Status check(const ProcessGroup& sp, const Backend& be, const UlyssesShape& s) {
  if (!be.host()) return Status::Unimplemented("sequence parallelism runs on host memory only, not on " + be.describe());
  if (s.C % sp.size() != 0) {
    return Status::InvalidArgument("Ulysses exchange: width " + std::to_string(s.C) + " is not divisible by " +
                                   std::to_string(sp.size()) + " ranks");
  }
  return Status::OK();
}

}  // namespace

Status ulysses_to_heads(ProcessGroup& sp, const Backend& backend, void* x, void* send, void* recv, size_t elem_bytes,
                        const UlyssesShape& s) {
  ZT_RETURN_IF_ERROR(check(sp, backend, s));
  const Geometry g(sp, elem_bytes, s);
  scatter_pieces(backend, static_cast<unsigned char*>(x), static_cast<unsigned char*>(send), g, s, true);
  ZT_RETURN_IF_ERROR(exchange(sp, send, recv, g));
  move_blocks(backend, static_cast<unsigned char*>(x), static_cast<unsigned char*>(recv), g, s, false);
  return Status::OK();
}

Status ulysses_to_sequence(ProcessGroup& sp, const Backend& backend, void* x, void* send, void* recv,
                           size_t elem_bytes, const UlyssesShape& s) {
  ZT_RETURN_IF_ERROR(check(sp, backend, s));
  const Geometry g(sp, elem_bytes, s);
  move_blocks(backend, static_cast<unsigned char*>(x), static_cast<unsigned char*>(send), g, s, true);
  ZT_RETURN_IF_ERROR(exchange(sp, send, recv, g));
  scatter_pieces(backend, static_cast<unsigned char*>(x), static_cast<unsigned char*>(recv), g, s, false);
  return Status::OK();
}

}  // namespace zt
