// Activation arena layout: one allocation, pointers carved in declaration order, first
// counted then assigned by the same code.
#include "nn/gpt_activations.h"

#include <utility>

#include "core/check.h"

#include <cstdint>

namespace zt {

namespace {

class Carver {
 public:
  explicit Carver(float* base) : base_(base) {}
  float* take(size_t count) {
    float* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (count + 15) / 16 * 16;  // keep every buffer 64-byte aligned
    return p;
  }
  size_t used() const { return used_; }

 private:
  float* base_;
  size_t used_ = 0;
};

struct Dims {
  size_t B, T, BT, C, Cl, NHl, Vl, tp;
};

void carve_internals(BlockActivations* b, const Dims& d, Carver* c) {
  b->ln1 = c->take(d.BT * d.C);
  b->ln1_mean = c->take(d.BT);
  b->ln1_rstd = c->take(d.BT);
  b->qkv = c->take(d.BT * 3 * d.Cl);
  b->att = c->take(d.B * d.NHl * d.T * d.T);
  b->atty = c->take(d.BT * d.Cl);
  b->res2 = c->take(d.BT * d.C);
  b->ln2 = c->take(d.BT * d.C);
  b->ln2_mean = c->take(d.BT);
  b->ln2_rstd = c->take(d.BT);
  b->fch = c->take(d.BT * 4 * d.Cl);
  b->fch_gelu = c->take(d.BT * 4 * d.Cl);
}

void carve(GptActivationArena* a, const GptConfig& cfg, const GptLayout& lay, const Dims& d, int slots,
           const std::vector<bool>& ckpt, bool partition, Carver* c) {
  const int first = lay.first_block, end = lay.end(cfg);
  auto checkpointed = [&](int l) { return !ckpt.empty() && l < end && ckpt[static_cast<size_t>(l)]; };
  const bool any_ckpt = [&] {
    for (int l = first; l < end; ++l) {
      if (checkpointed(l)) return true;
    }
    return false;
  }();
  const bool partitioned = partition && d.tp > 1;
  GptScratch& s = a->scratch;
  a->slots.assign(static_cast<size_t>(slots), GptActivations{});
  for (GptActivations& g : a->slots) {
    g.encoded = c->take(d.BT * d.C);
    g.blocks.assign(static_cast<size_t>(cfg.n_layer), BlockActivations{});
    for (int l = first; l < end; ++l) {
      BlockActivations& b = g.blocks[static_cast<size_t>(l)];
      b.checkpointed = checkpointed(l);
      if (!b.checkpointed) carve_internals(&b, d, c);
      // The output stays whole unless the next block is checkpointed and partitioned.
      const bool live = partitioned && l + 1 < end && checkpointed(l + 1);
      if (!live) b.res3 = c->take(d.BT * d.C);
      // Its input is the previous block's live output: keep this rank's slice of it.
      if (b.checkpointed && partitioned && l > first) b.saved_input_part = c->take(d.BT * d.C / d.tp);
    }
    if (lay.head) {
      g.lnf = c->take(d.BT * d.C);
      g.lnf_mean = c->take(d.BT);
      g.lnf_rstd = c->take(d.BT);
      g.logits = c->take(d.BT * d.Vl);
      g.losses = c->take(d.BT);
      g.xent_stats = c->take(2 * d.BT);
    }
  }
  a->saved_bytes = c->used() * sizeof(float);
  s.dresidual = c->take(d.BT * d.C);
  s.dln = c->take(d.BT * d.C);
  s.dqkv = c->take(d.BT * 3 * d.Cl);
  s.dfch = c->take(d.BT * 4 * d.Cl);
  if (d.tp > 1) {
    s.tp_partial = c->take(d.BT * d.C);
    s.tp_rows = c->take(d.tp * d.BT);
    s.tp_row_sums = c->take(2 * d.BT);
  }
  if (any_ckpt) {
    carve_internals(&s.recompute, d, c);
    s.recompute.res3 = c->take(d.BT * d.C);
  }
  if (partitioned && any_ckpt) {
    s.live[0] = c->take(d.BT * d.C);
    s.live[1] = c->take(d.BT * d.C);
    s.gathered_input = c->take(d.BT * d.C);
  }
  a->scratch_bytes = c->used() * sizeof(float) - a->saved_bytes;
  // Outputs of partitioned checkpointed blocks alternate between the two live buffers.
  if (partitioned && any_ckpt) {
    for (GptActivations& g : a->slots) {
      for (int l = first; l < end; ++l) {
        BlockActivations& b = g.blocks[static_cast<size_t>(l)];
        if (b.res3 == nullptr) b.res3 = s.live[l % 2];
      }
    }
  }
  // Checkpointed blocks compute their internals in the shared recompute set.
  for (GptActivations& g : a->slots) {
    for (int l = first; l < end; ++l) {
      BlockActivations& b = g.blocks[static_cast<size_t>(l)];
      if (!b.checkpointed) continue;
      float* res3 = b.res3;
      float* part = b.saved_input_part;
      b = s.recompute;
      b.res3 = res3;
      b.checkpointed = true;
      b.saved_input_part = part;
    }
  }
}

Dims dims_of(const GptConfig& cfg, const GptLayout& lay, int max_batch, int max_seq) {
  const size_t tp = static_cast<size_t>(lay.tp_size);
  Dims d;
  d.B = static_cast<size_t>(max_batch);
  d.T = static_cast<size_t>(max_seq);
  d.BT = d.B * d.T;
  d.C = static_cast<size_t>(cfg.n_embd);
  d.Cl = d.C / tp;
  d.NHl = static_cast<size_t>(cfg.n_head) / tp;
  d.Vl = static_cast<size_t>(cfg.padded_vocab()) / tp;
  d.tp = tp;
  return d;
}

}  // namespace

size_t GptActivationArena::count(const GptConfig& cfg, const GptLayout& lay, int max_batch, int max_seq, int slots,
                                 const std::vector<bool>& checkpoint, bool partition) {
  GptActivationArena a;
  Carver counter(nullptr);
  carve(&a, cfg, lay, dims_of(cfg, lay, max_batch, max_seq), slots, checkpoint, partition, &counter);
  return counter.used();
}

GptActivationArena GptActivationArena::allocate(const GptConfig& cfg, const GptLayout& lay, int max_batch, int max_seq,
                                                int slots, const std::vector<bool>& checkpoint, bool partition,
                                                const Backend& backend) {
  const Dims d = dims_of(cfg, lay, max_batch, max_seq);
  GptActivationArena a;
  Carver counter(nullptr);
  carve(&a, cfg, lay, d, slots, checkpoint, partition, &counter);
  StatusOr<Arena> arena = backend.allocate(counter.used(), DType::kF32, "the activations");
  ZT_CHECK(arena.ok(), "%s", arena.status().to_string().c_str());
  a.arena = std::move(arena).value();
  Carver carver(a.arena.data());
  carve(&a, cfg, lay, d, slots, checkpoint, partition, &carver);
  return a;
}

}  // namespace zt
