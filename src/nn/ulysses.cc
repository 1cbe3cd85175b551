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

// (b, t, w) of the sequence layout, peer q's piece <-> its place in a peer segment:
// from seq_in into segs (to_segments), or from segs_in into seq_out.
struct Ends {
  const unsigned char* in;
  unsigned char* out;
};

void scatter_pieces(const Backend& be, Ends seq, Ends segs, const Geometry& g, const UlyssesShape& s,
                    bool to_segments) {
  const size_t row = static_cast<size_t>(s.W) * static_cast<size_t>(s.C) * g.e;  // a full-width token row
  for (int q = 0; q < g.P; ++q) {
    for (int64_t bt = 0; bt < static_cast<int64_t>(s.B) * s.Tl; ++bt) {
      for (int w = 0; w < s.W; ++w) {
        const size_t a = static_cast<size_t>(bt) * row + static_cast<size_t>(w) * s.C * g.e + q * g.piece;
        const size_t b = q * g.seg + static_cast<size_t>(bt) * g.row_local + static_cast<size_t>(w) * g.piece;
        if (to_segments) {
          be.copy(segs.out + b, seq.in + a, g.piece);
        } else {
          be.copy(seq.out + a, segs.in + b, g.piece);
        }
      }
    }
  }
}

// Peer q's Tl tokens of sequence b <-> rows [q Tl, (q+1) Tl) of sequence b in the head layout.
void move_blocks(const Backend& be, Ends heads, Ends segs, const Geometry& g, const UlyssesShape& s, bool to_segments) {
  const size_t block = g.row_local * static_cast<size_t>(s.Tl);
  for (int q = 0; q < g.P; ++q) {
    for (int b = 0; b < s.B; ++b) {
      const size_t h = (static_cast<size_t>(b) * g.P + q) * block;
      const size_t seg = q * g.seg + static_cast<size_t>(b) * block;
      if (to_segments) {
        be.copy(segs.out + seg, heads.in + h, block);
      } else {
        be.copy(heads.out + h, segs.in + seg, block);
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

Status ulysses_to_heads(ProcessGroup& sp, const Backend& backend, const void* in, void* out, const UlyssesScratch& b,
                        const UlyssesShape& s) {
  ZT_RETURN_IF_ERROR(check(sp, backend, s));
  const Geometry g(sp, b.elem_bytes, s);
  auto* send = static_cast<unsigned char*>(b.send);
  auto* recv = static_cast<unsigned char*>(b.recv);
  scatter_pieces(backend, {static_cast<const unsigned char*>(in), nullptr}, {nullptr, send}, g, s, true);
  ZT_RETURN_IF_ERROR(exchange(sp, send, recv, g));
  move_blocks(backend, {nullptr, static_cast<unsigned char*>(out)}, {recv, nullptr}, g, s, false);
  return Status::OK();
}

Status ulysses_to_sequence(ProcessGroup& sp, const Backend& backend, const void* in, void* out,
                           const UlyssesScratch& b, const UlyssesShape& s) {
  ZT_RETURN_IF_ERROR(check(sp, backend, s));
  const Geometry g(sp, b.elem_bytes, s);
  auto* send = static_cast<unsigned char*>(b.send);
  auto* recv = static_cast<unsigned char*>(b.recv);
  move_blocks(backend, {static_cast<const unsigned char*>(in), nullptr}, {nullptr, send}, g, s, true);
  ZT_RETURN_IF_ERROR(exchange(sp, send, recv, g));
  scatter_pieces(backend, {nullptr, static_cast<unsigned char*>(out)}, {recv, nullptr}, g, s, false);
  return Status::OK();
}

}  // namespace zt
