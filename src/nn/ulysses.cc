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

// One direction of copies between a layout (the sequence or the head one) and the peer
// segments: packing reads the layout and writes segments, unpacking the reverse.
struct Move {
  const Backend& be;
  bool to_segments;
  const unsigned char* src;
  unsigned char* dst;
  void operator()(size_t layout_at, size_t segment_at, size_t n) const {
    if (to_segments) {
      be.copy(dst + segment_at, src + layout_at, n);
    } else {
      be.copy(dst + layout_at, src + segment_at, n);
    }
  }
};

// (b, t, w) of the sequence layout, peer q's piece <-> its place in peer q's segment.
void move_pieces(const Move& move, const Geometry& g, const UlyssesShape& s) {
  const size_t row = static_cast<size_t>(s.W) * static_cast<size_t>(s.C) * g.e;  // a full-width token row
  for (int q = 0; q < g.P; ++q) {
    for (int64_t bt = 0; bt < static_cast<int64_t>(s.B) * s.Tl; ++bt) {
      for (int w = 0; w < s.W; ++w) {
        move(static_cast<size_t>(bt) * row + static_cast<size_t>(w) * s.C * g.e + q * g.piece,
             q * g.seg + static_cast<size_t>(bt) * g.row_local + static_cast<size_t>(w) * g.piece, g.piece);
      }
    }
  }
}

// Peer q's Tl tokens of sequence b <-> rows [q Tl, (q+1) Tl) of sequence b in the head layout.
void move_blocks(const Move& move, const Geometry& g, const UlyssesShape& s) {
  const size_t block = g.row_local * static_cast<size_t>(s.Tl);
  for (int q = 0; q < g.P; ++q) {
    for (int b = 0; b < s.B; ++b) {
      move((static_cast<size_t>(b) * g.P + q) * block, q * g.seg + static_cast<size_t>(b) * block, block);
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

// Packs `in` (the sequence layout to_heads, else the head layout), exchanges, unpacks into `out`.
Status exchange_layouts(ProcessGroup& sp, const Backend& be, const void* in, void* out, const UlyssesScratch& b,
                        const UlyssesShape& s, bool to_heads) {
  ZT_RETURN_IF_ERROR(check(sp, be, s));
  const Geometry g(sp, b.elem_bytes, s);
  auto* send = static_cast<unsigned char*>(b.send);
  auto* recv = static_cast<unsigned char*>(b.recv);
  const Move pack{be, true, static_cast<const unsigned char*>(in), send};
  const Move unpack{be, false, recv, static_cast<unsigned char*>(out)};
  if (to_heads) {
    move_pieces(pack, g, s);
  } else {
    move_blocks(pack, g, s);
  }
  ZT_RETURN_IF_ERROR(exchange(sp, send, recv, g));
  if (to_heads) {
    move_blocks(unpack, g, s);
  } else {
    move_pieces(unpack, g, s);
  }
  return Status::OK();
}

}  // namespace

Status ulysses_to_heads(ProcessGroup& sp, const Backend& backend, const void* in, void* out, const UlyssesScratch& b,
                        const UlyssesShape& s) {
  return exchange_layouts(sp, backend, in, out, b, s, /*to_heads=*/true);
}

Status ulysses_to_sequence(ProcessGroup& sp, const Backend& backend, const void* in, void* out,
                           const UlyssesScratch& b, const UlyssesShape& s) {
  return exchange_layouts(sp, backend, in, out, b, s, /*to_heads=*/false);
}

}  // namespace zt
