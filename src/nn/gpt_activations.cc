// Activation arena layout: one allocation, pointers carved in declaration order, first
// counted then assigned by the same code.
#include "nn/gpt_activations.h"

#include "nn/gpt_params.h"
#include "nn/param_names.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/check.h"

#include <cstdint>

namespace zt {

namespace {

// Hands out 64-byte aligned buffers of a byte arena in order; with a null base it only counts.
class Carver {
 public:
  explicit Carver(unsigned char* base) : base_(base) {}
  template <typename T>
  T* take(size_t count) {
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + used_);
    used_ += (count * sizeof(T) + 63) / 64 * 64;
    return p;
  }
  float* stats(size_t count) { return take<float>(count); }
  size_t used() const { return used_; }  // bytes
  void seek(size_t at) { used_ = at; }   // carve from `at` again (buffers that alias)

 private:
  unsigned char* base_;
  size_t used_ = 0;
};

struct Dims {
  size_t B, T, BT, C, Cl, NHl, Vl, tp;
  size_t F;     // the rank's MLP width, mlp_width()/tp
  size_t KVl;   // the rank's k and v rows (kv heads x head size)
  size_t HD;    // head size
  size_t sp = 1;     // sequence parallelism: the group's size (T is this rank's tokens)
  size_t NHa, Ta;    // attention's heads and sequence: NHl and T, or under sp n_head/sp and T sp
  bool layernorm, swiglu, split_qkv, rotary;
  bool flash = false;  // flash attention (ArenaShape::flash)
  // MoE blocks (zero for a dense model): experts, experts per token, the expert buffers'
  // rows per expert (moe_capacity_bound for B T tokens) and the expert width.
  size_t E = 0, K = 0, cap = 0, Ie = 0;
  size_t S = 0;  // the dense MLP beside the experts (0: none)
  size_t ep = 1;  // expert parallelism: the group's size
  // The expert buffers' rows in the compact layout (kernels/moe_ops.h): a rank's own kept
  // slots, at most min(BT k, E cap); with ep, what its experts receive from the ep peers,
  // at most min(E cap, ep BT min(k, E/ep)).
  size_t rows_local = 0, rows_recv = 0;
  size_t moe_island = 0;  // 16-bit compute: the fp32 copy of an MoE block's weights (moe_island_params)
};

// An MoE block's saved activations (nn/moe_config.h), fp32.
template <typename A>
void carve_moe(BlockActivationsT<A>* b, const Dims& d, Carver* c) {
  b->moe_logits = c->stats(d.BT * d.E);
  b->moe_expert = c->take<int32_t>(d.BT * d.K);
  b->moe_location = c->take<int32_t>(d.BT * d.K);
  b->moe_weight = c->stats(d.BT * d.K);
  b->moe_buf = c->stats(d.rows_recv * d.C);
  b->moe_h_in = c->stats(d.rows_recv * d.Ie);
  if (d.swiglu) b->moe_h_up = c->stats(d.rows_recv * d.Ie);
  b->moe_act = c->stats(d.rows_recv * d.Ie);
  b->moe_out = c->stats(d.rows_local * d.C);
  b->moe_routed = c->stats(d.BT * d.C);
  if (d.S == 0) return;
  b->moe_sh_in = c->stats(d.BT * d.S);
  if (d.swiglu) b->moe_sh_up = c->stats(d.BT * d.S);
  b->moe_sh_act = c->stats(d.BT * d.S);
  b->moe_sh_out = c->stats(d.BT * d.C);
  b->moe_mix_logits = c->stats(d.BT * 2);
}

// dense / moe: the dense MLP's buffers, an MoE block's (the shared recompute set may need both).
template <typename A>
void carve_internals(BlockActivationsT<A>* b, const Dims& d, Carver* c, bool dense, bool moe) {
  b->norm1 = c->take<A>(d.BT * d.C);
  if (d.layernorm) b->norm1_mean = c->stats(d.BT);
  b->norm1_rstd = c->stats(d.BT);
  b->qkv = c->take<A>(d.BT * 3 * d.Cl);
  if (!d.flash) {
    b->att = c->take<A>(d.B * d.NHa * d.Ta * d.Ta);
  } else {  // the log-sum-exp; under sp also the output in the head layout (the backward's O)
    b->lse = c->stats(d.B * d.NHa * d.Ta);
    if (d.sp > 1) b->att = c->take<A>(d.B * d.Ta * d.NHa * d.HD);
  }
  b->att_out = c->take<A>(d.BT * d.Cl);
  b->res_attn = c->take<A>(d.BT * d.C);
  b->norm2 = c->take<A>(d.BT * d.C);
  if (d.layernorm) b->norm2_mean = c->stats(d.BT);
  b->norm2_rstd = c->stats(d.BT);
  if (moe) carve_moe(b, d, c);
  if (!dense) return;
  b->mlp_in = c->take<A>(d.BT * d.F);
  if (d.swiglu) b->mlp_up = c->take<A>(d.BT * d.F);
  b->mlp_act = c->take<A>(d.BT * d.F);
}

// What the layout and options decide about the arena: which blocks are checkpointed, and
// whether their outputs rotate in two live buffers (partitioned or stashed checkpoints).
// Each chunk (GptLayout::chunks) is walked on its own: its first block's input is the
// slot's stage input, its last block's output is kept whole for the next stage.
struct CarvePlan {
  std::vector<BlockRange> chunks;
  std::vector<int> blocks;  // every held block, ascending
  std::vector<bool> ckpt;   // per global block
  bool partitioned, stash, stash_ahead, rotate, any_ckpt, routing;
  bool checkpointed(int l) const { return !ckpt.empty() && ckpt[static_cast<size_t>(l)]; }
};

CarvePlan plan_of(const GptConfig& cfg, const GptLayout& lay, const Dims& d, const ArenaShape& shape) {
  CarvePlan p{lay.block_ranges(cfg), lay.blocks(cfg), shape.checkpoint, shape.partition && d.tp > 1, shape.stash,
              shape.stash && shape.stash_ahead, false, false, shape.routing};
  ZT_CHECK(!(p.partitioned && p.stash), "partitioned checkpoints and an activation stash do not combine");
  p.rotate = p.partitioned || p.stash;  // outputs feeding a checkpointed block rotate in two live buffers
  for (int l : p.blocks) p.any_ckpt = p.any_ckpt || p.checkpointed(l);
  return p;
}

bool stashes_input(const BlockRange& r, int l, bool checkpointed) { return checkpointed && l > r.begin; }

// One chunk's blocks of a slot.
template <typename A>
void carve_chunk(GptActivationsT<A>* g, const GptConfig& cfg, const Dims& d, const CarvePlan& p, BlockRange r,
                 Carver* c) {
  for (int l = r.begin; l < r.end; ++l) {
    BlockActivationsT<A>& b = g->blocks[static_cast<size_t>(l)];
    b.checkpointed = p.checkpointed(l);
    if (!b.checkpointed) carve_internals(&b, d, c, !cfg.moe_block(l), cfg.moe_block(l));
    // The output stays whole unless the next block is checkpointed and partitioned.
    const bool live = p.rotate && l + 1 < r.end && p.checkpointed(l + 1);
    if (!live) b.output = c->take<A>(d.BT * d.C);
    // Its input is the previous block's live output: keep this rank's slice of it, or stash it.
    if (b.checkpointed && p.partitioned && l > r.begin) b.saved_input_part = c->take<A>(d.BT * d.C / d.tp);
    b.stashed_input = p.stash && stashes_input(r, l, b.checkpointed);
  }
}

// One in-flight micro-batch's saved activations. A slot holds one chunk at a time, so the
// chunks' blocks share its bytes: the slot is as large as its largest chunk.
template <typename A>
void carve_slot(GptActivationsT<A>* g, const GptConfig& cfg, const GptLayout& lay, const Dims& d, const CarvePlan& p,
                Carver* c) {
  g->encoded = c->take<A>(d.BT * d.C);
  g->blocks.assign(static_cast<size_t>(cfg.n_layer), BlockActivationsT<A>{});
  const size_t start = c->used();
  size_t end = start;
  for (const BlockRange& r : p.chunks) {
    c->seek(start);
    carve_chunk(g, cfg, d, p, r, c);
    end = std::max(end, c->used());
  }
  c->seek(end);
}

// The head's activations: in each slot, or once for all (ArenaShape::shared_head).
template <typename A>
void carve_head(GptActivationsT<A>* g, const Dims& d, Carver* c) {
  g->norm_f = c->take<A>(d.BT * d.C);
  if (d.layernorm) g->norm_f_mean = c->stats(d.BT);
  g->norm_f_rstd = c->stats(d.BT);
  g->logits = c->take<A>(d.BT * d.Vl);
  g->losses = c->stats(d.BT);
  g->xent_stats = c->stats(2 * d.BT);
}

// The backward's scratch, shared by every slot; the knobs decide which buffers exist.
template <typename A>
void carve_moe_scratch(GptScratchT<A>* s, const Dims& d, Carver* c) {
  s->moe_y = c->stats(d.BT * d.C);
  s->moe_dx = c->stats(d.BT * d.C);
  s->moe_dbuf = c->stats(d.rows_recv * d.C);
  s->moe_dout = c->stats(d.rows_local * d.C);
  if (d.ep > 1) s->moe_xchg = c->stats(d.rows_recv * d.C);
  if constexpr (!std::is_same_v<A, float>) {
    s->moe_x32 = c->stats(d.BT * d.C);
    s->moe_dy32 = c->stats(d.BT * d.C);
    s->moe_dx32 = c->stats(d.BT * d.C);
    s->moe_w32 = c->stats(d.moe_island);
  }
  s->moe_dweight = c->stats(d.BT * d.K);
  s->moe_dlogits = c->stats(d.BT * d.E);
  // moe_experts_scratch_floats for the experts, or the dense MLP beside them (N rows, S wide).
  const size_t rows = std::max(d.cap, d.S > 0 ? d.BT : 0), width = std::max(d.Ie, d.S);
  s->moe_experts = c->stats(rows * width * 3 + rows * d.C);
  if (d.S == 0) return;
  s->moe_dmoe = c->stats(d.BT * d.C);
  s->moe_ddense = c->stats(d.BT * d.C);
  s->moe_dmix = c->stats(d.BT * 2);
}

template <typename A>
void carve_scratch(GptScratchT<A>* s, const Dims& d, const CarvePlan& p, Carver* c) {
  s->dresidual = c->take<A>(d.BT * d.C);
  s->dnorm = c->take<A>(d.BT * d.C);
  s->dqkv = c->take<A>(d.BT * 3 * d.Cl);
  s->dmlp = c->take<A>(d.BT * d.F);
  const bool shared_inputs = d.split_qkv || d.swiglu;  // input gradients summed in fp32
  if (d.tp > 1 || shared_inputs) s->tp_partial = c->stats(d.BT * d.C);
  if (d.tp > 1) {
    s->tp_rows = c->stats(d.tp * d.BT);
    s->tp_row_sums = c->stats(2 * d.BT);
  }
  if (d.swiglu) s->dmlp_up = c->take<A>(d.BT * d.F);
  if (d.split_qkv) {
    s->q = c->take<A>(d.BT * d.Cl);
    s->k = c->take<A>(d.BT * d.KVl);
    s->v = c->take<A>(d.BT * d.KVl);
  }
  if (shared_inputs) s->grad_tmp = c->stats(d.BT * d.C);
  if (d.rotary) s->freqs = c->stats(d.Ta * d.HD);
  if (d.sp > 1) {  // Ulysses' exchange buffers (the widest exchanged activation: q, k, v)
    s->sp_send = c->take<A>(d.BT * 3 * d.C);
    s->sp_recv = c->take<A>(d.BT * 3 * d.C);
  }
  if (d.E > 0) carve_moe_scratch(s, d, c);
  if (p.any_ckpt) {
    carve_internals(&s->recompute, d, c, true, d.E > 0);
    s->recompute.output = c->take<A>(d.BT * d.C);
  }
  if (p.rotate && p.any_ckpt) {
    s->live[0] = c->take<A>(d.BT * d.C);
    s->live[1] = c->take<A>(d.BT * d.C);
    if (p.partitioned || p.stash) s->gathered_input = c->take<A>(d.BT * d.C);
    if (p.stash_ahead) s->gathered_ahead = c->take<A>(d.BT * d.C);
  }
  if (p.routing) {
    s->route_rows = c->take<A>(d.BT * d.C);
    s->route_grad = c->take<A>(d.BT * d.C);
    if (d.rotary) s->route_freqs = c->stats(d.BT * d.HD);
    s->route_branch = c->take<A>(d.BT * d.C);
    s->route_f32 = c->stats(d.BT * d.C);
  }
}

// Outputs feeding partitioned or stashed checkpointed blocks alternate between the two live
// buffers; checkpointed blocks compute their internals in the shared recompute set.
template <typename A>
void point_shared(GptActivationArenaT<A>* a, const CarvePlan& p) {
  const GptScratchT<A>& s = a->scratch;
  for (GptActivationsT<A>& g : a->slots) {
    for (int l : p.blocks) {
      BlockActivationsT<A>& b = g.blocks[static_cast<size_t>(l)];
      if (p.rotate && p.any_ckpt && b.output == nullptr) b.output = s.live[l % 2];
      if (!b.checkpointed) continue;
      A* output = b.output;
      A* part = b.saved_input_part;
      const bool stashed = b.stashed_input;
      b = s.recompute;
      b.output = output;
      b.checkpointed = true;
      b.saved_input_part = part;
      b.stashed_input = stashed;
    }
  }
}

template <typename A>
void carve(GptActivationArenaT<A>* a, const GptConfig& cfg, const GptLayout& lay, const Dims& d,
           const ArenaShape& shape, Carver* c) {
  const CarvePlan p = plan_of(cfg, lay, d, shape);
  a->slots.assign(static_cast<size_t>(shape.slots), GptActivationsT<A>{});
  for (GptActivationsT<A>& g : a->slots) {
    carve_slot(&g, cfg, lay, d, p, c);
    if (lay.head && !shape.shared_head) carve_head(&g, d, c);
  }
  if (lay.head && shape.shared_head) {
    GptActivationsT<A> head;
    carve_head(&head, d, c);
    for (GptActivationsT<A>& g : a->slots) {
      g.norm_f = head.norm_f;
      g.norm_f_mean = head.norm_f_mean;
      g.norm_f_rstd = head.norm_f_rstd;
      g.logits = head.logits;
      g.losses = head.losses;
      g.xent_stats = head.xent_stats;
    }
  }
  a->saved_bytes = c->used();
  carve_scratch(&a->scratch, d, p, c);
  a->scratch_bytes = c->used() - a->saved_bytes;
  point_shared(a, p);
}

// 16-bit compute's fp32 copy of an MoE block (nn/gpt_moe.cc widened_moe): the block's
// tensors from the router on that are not an expert's, plus its largest expert; the most
// over this rank's MoE blocks.
size_t moe_island_params(const GptConfig& cfg, const GptLayout& lay) {
  const ParamTable table = build_gpt_param_table(cfg, lay);
  const ParamNames& names = param_names(cfg.family());
  size_t most = 0;
  for (int l : lay.blocks(cfg)) {
    if (!cfg.moe_block(l)) continue;
    const int router = table.find(block_prefix(names, l) + names.moe_router + ".weight");
    ZT_CHECK(router >= 0, "MoE block %d has no router", l);
    size_t dense = 0;
    std::map<int, size_t> expert;
    for (size_t i = static_cast<size_t>(router); i < table.specs().size() && table.specs()[i].layer == l; ++i) {
      const TensorSpec& t = table.specs()[i];
      (t.expert < 0 ? dense : expert[t.expert]) += t.numel;
    }
    size_t widest = 0;
    for (const auto& [e, n] : expert) widest = std::max(widest, n);
    most = std::max(most, dense + widest);
  }
  return most;
}

Dims dims_of(const GptConfig& cfg, const GptLayout& lay, const ArenaShape& shape) {
  const size_t tp = static_cast<size_t>(lay.tp_size);
  Dims d;
  d.B = static_cast<size_t>(shape.max_batch);
  d.T = static_cast<size_t>(shape.max_seq);
  d.flash = shape.flash;
  d.BT = d.B * d.T;
  d.C = static_cast<size_t>(cfg.n_embd);
  d.Cl = d.C / tp;
  d.NHl = static_cast<size_t>(cfg.n_head) / tp;
  d.Vl = static_cast<size_t>(cfg.padded_vocab()) / tp;
  d.tp = tp;
  d.layernorm = !cfg.rms_norm();
  d.swiglu = cfg.swiglu();
  d.split_qkv = !cfg.fused_qkv;
  d.rotary = cfg.rotary();
  d.F = static_cast<size_t>(cfg.mlp_width()) / tp;
  d.KVl = static_cast<size_t>(cfg.kv_dim()) / tp;
  d.HD = static_cast<size_t>(cfg.head_size());
  d.sp = static_cast<size_t>(lay.sp_size);
  d.NHa = d.NHl / d.sp;
  d.Ta = d.T * d.sp;
  if (cfg.moe.enabled()) {
    d.E = static_cast<size_t>(cfg.moe.num_experts);
    d.K = static_cast<size_t>(cfg.moe.k());
    d.cap = static_cast<size_t>(moe_capacity_bound(cfg.moe.widest_gate(), static_cast<int64_t>(d.BT), cfg.moe.num_experts));
    d.Ie = static_cast<size_t>(cfg.expert_width());
    d.S = static_cast<size_t>(cfg.moe.has_shared() ? cfg.shared_width() : 0);
    d.ep = static_cast<size_t>(lay.ep_size);
    d.rows_local = std::min(d.BT * d.K, d.E * d.cap);
    d.rows_recv = d.ep == 1 ? d.rows_local : std::min(d.E * d.cap, d.ep * d.BT * std::min(d.K, d.E / d.ep));
    d.moe_island = moe_island_params(cfg, lay);
  }
  return d;
}

}  // namespace

template <typename A>
size_t GptActivationArenaT<A>::count(const GptConfig& cfg, const GptLayout& lay, const ArenaShape& shape) {
  GptActivationArenaT<A> a;
  Carver counter(nullptr);
  carve(&a, cfg, lay, dims_of(cfg, lay, shape), shape, &counter);
  return counter.used();
}

template <typename A>
GptActivationArenaT<A> GptActivationArenaT<A>::allocate(const GptConfig& cfg, const GptLayout& lay,
                                                        const ArenaShape& shape, const Backend& backend) {
  const Dims d = dims_of(cfg, lay, shape);
  GptActivationArenaT<A> a;
  Carver counter(nullptr);
  carve(&a, cfg, lay, d, shape, &counter);
  // Held as 4-byte words: the arena mixes A activations with float statistics, every
  // buffer 64-byte aligned (counter.used() is a multiple of 64).
  StatusOr<Arena> arena = backend.allocate(counter.used() / sizeof(float), DType::kF32, "the activations");
  ZT_CHECK(arena.ok(), "%s", arena.status().to_string().c_str());
  a.arena = std::move(arena).value();
  Carver carver(reinterpret_cast<unsigned char*>(a.arena.data()));
  carve(&a, cfg, lay, d, shape, &carver);
  return a;
}

std::vector<int> stashed_blocks(const GptConfig& cfg, const GptLayout& layout, const std::vector<bool>& checkpoint) {
  std::vector<int> out;
  for (const BlockRange& r : layout.block_ranges(cfg)) {
    for (int l = r.begin; l < r.end; ++l) {
      if (stashes_input(r, l, !checkpoint.empty() && checkpoint[static_cast<size_t>(l)])) out.push_back(l);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template struct GptActivationArenaT<float>;
template struct GptActivationArenaT<half_t>;

}  // namespace zt
