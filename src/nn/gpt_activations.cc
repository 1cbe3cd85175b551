// Activation arena layout: one allocation, pointers carved in declaration order.
#include "nn/gpt_activations.h"

#include <cstdint>

namespace zt {

namespace {

// Two passes over the same carving code: first to count, then to assign pointers.
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

void carve(GptActivations* a, const GptConfig& cfg, size_t BT, size_t B, size_t T, Carver* c) {
  const size_t C = static_cast<size_t>(cfg.n_embd), NH = static_cast<size_t>(cfg.n_head);
  const size_t Vp = static_cast<size_t>(cfg.padded_vocab());
  a->encoded = c->take(BT * C);
  a->blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (BlockActivations& b : a->blocks) {
    b.ln1 = c->take(BT * C);
    b.ln1_mean = c->take(BT);
    b.ln1_rstd = c->take(BT);
    b.qkv = c->take(BT * 3 * C);
    b.att = c->take(B * NH * T * T);
    b.atty = c->take(BT * C);
    b.res2 = c->take(BT * C);
    b.ln2 = c->take(BT * C);
    b.ln2_mean = c->take(BT);
    b.ln2_rstd = c->take(BT);
    b.fch = c->take(BT * 4 * C);
    b.fch_gelu = c->take(BT * 4 * C);
    b.res3 = c->take(BT * C);
  }
  a->lnf = c->take(BT * C);
  a->lnf_mean = c->take(BT);
  a->lnf_rstd = c->take(BT);
  a->logits = c->take(BT * Vp);
  a->losses = c->take(BT);
  a->xent_stats = c->take(2 * BT);
  a->saved_bytes = c->used() * sizeof(float);
  a->dresidual = c->take(BT * C);
  a->dln = c->take(BT * C);
  a->dqkv = c->take(BT * 3 * C);
  a->dfch = c->take(BT * 4 * C);
  a->scratch_bytes = c->used() * sizeof(float) - a->saved_bytes;
}

}  // namespace

GptActivations GptActivations::allocate(const GptConfig& cfg, int max_batch, int max_seq) {
  const size_t B = static_cast<size_t>(max_batch), T = static_cast<size_t>(max_seq);
  GptActivations a;
  Carver counter(nullptr);
  carve(&a, cfg, B * T, B, T, &counter);
  a.arena = FloatBuffer(counter.used());
  Carver carver(a.arena.data());
  carve(&a, cfg, B * T, B, T, &carver);
  return a;
}

}  // namespace zt
