// The kernel calls of a micro-batch; see op_list.h.
#include "planner/op_list.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace zt {

namespace {

constexpr const char* kNames[kNumOpKinds] = {
    "linear_forward", "linear_backward", "attention_forward", "attention_backward", "layernorm_forward",
    "layernorm_backward", "rmsnorm_forward", "rmsnorm_backward", "gelu_forward", "gelu_backward",
    "swiglu_forward", "swiglu_backward", "rope_forward", "rope_backward", "encoder_forward",
    "encoder_backward", "xent_forward", "xent_backward", "adamw"};

// Dimensions each kind takes.
int arity(OpKind k) {
  switch (k) {
    case OpKind::kLinearForward:
    case OpKind::kLinearBackward:
    case OpKind::kEncoderForward:
    case OpKind::kEncoderBackward:
      return 3;
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
    case OpKind::kRopeForward:
    case OpKind::kRopeBackward:
      return 4;
    case OpKind::kLayerNormForward:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormForward:
    case OpKind::kRmsNormBackward:
    case OpKind::kXentForward:
    case OpKind::kXentBackward:
      return 2;
    default:
      return 1;
  }
}

OpCall op(OpKind k, int64_t a, int64_t b = 0, int64_t c = 0, int64_t d = 0) {
  OpCall o;
  o.kind = k;
  o.dims[0] = a;
  o.dims[1] = b;
  o.dims[2] = c;
  o.dims[3] = d;
  return o;
}

// Tensor-parallel widths of this rank; SP: Ulysses' degree (attention runs on the whole
// sequence, T·SP, for NHl/SP heads).
struct Widths {
  int64_t BT, C, Cl, NHl, HD, KVl, NKVl, Il, Vl, SP;
};

Widths widths(const GptConfig& c, const GptLayout& l, int B, int T) {
  const int P = l.tp_size;
  Widths w;
  w.BT = static_cast<int64_t>(B) * T;
  w.C = c.n_embd;
  w.Cl = c.n_embd / P;
  w.NHl = c.n_head / P;
  w.HD = c.head_size();
  w.NKVl = c.kv_heads() / P;
  w.KVl = w.NKVl * w.HD;
  w.Il = c.mlp_width() / P;
  w.Vl = c.padded_vocab() / P;
  w.SP = l.sp_size;
  return w;
}

OpKind norm(const GptConfig& c, bool forward) {
  if (c.rms_norm()) return forward ? OpKind::kRmsNormForward : OpKind::kRmsNormBackward;
  return forward ? OpKind::kLayerNormForward : OpKind::kLayerNormBackward;
}

// The q, k, v projections: one fused GEMM, or three (q, then k and v over the kv heads).
void qkv_ops(const GptConfig& c, const Widths& w, OpKind linear, std::vector<OpCall>* out) {
  if (c.fused_qkv) {
    out->push_back(op(linear, w.BT, w.C, 3 * w.Cl));
    return;
  }
  for (int64_t rows : {w.Cl, w.KVl, w.KVl}) out->push_back(op(linear, w.BT, w.C, rows));
}

// RoPE on q and k (rotary positions only).
void rope_ops(const GptConfig& c, const Widths& w, int B, int T, OpKind rope, std::vector<OpCall>* out) {
  if (!c.rotary()) return;
  out->push_back(op(rope, B, T, w.NHl, w.HD));
  out->push_back(op(rope, B, T, w.NKVl, w.HD));
}

// The block's kernel calls in the model's order (nn/gpt_block.cc), each step by its knob.
void block_forward(const GptConfig& c, const Widths& w, int B, int T, std::vector<OpCall>* out) {
  out->push_back(op(norm(c, true), w.BT, w.C));
  qkv_ops(c, w, OpKind::kLinearForward, out);
  rope_ops(c, w, B, T, OpKind::kRopeForward, out);
  out->push_back(op(OpKind::kAttentionForward, B, T * w.SP, w.Cl / w.SP, w.NHl / w.SP));
  out->push_back(op(OpKind::kLinearForward, w.BT, w.Cl, w.C));
  out->push_back(op(norm(c, true), w.BT, w.C));
  out->push_back(op(OpKind::kLinearForward, w.BT, w.C, w.Il));
  if (c.swiglu()) out->push_back(op(OpKind::kLinearForward, w.BT, w.C, w.Il));
  out->push_back(op(c.swiglu() ? OpKind::kSwigluForward : OpKind::kGeluForward, w.BT * w.Il));
  out->push_back(op(OpKind::kLinearForward, w.BT, w.Il, w.C));
}

void block_backward(const GptConfig& c, const Widths& w, int B, int T, std::vector<OpCall>* out) {
  out->push_back(op(OpKind::kLinearBackward, w.BT, w.Il, w.C));
  out->push_back(op(c.swiglu() ? OpKind::kSwigluBackward : OpKind::kGeluBackward, w.BT * w.Il));
  out->push_back(op(OpKind::kLinearBackward, w.BT, w.C, w.Il));
  if (c.swiglu()) out->push_back(op(OpKind::kLinearBackward, w.BT, w.C, w.Il));
  out->push_back(op(norm(c, false), w.BT, w.C));
  out->push_back(op(OpKind::kLinearBackward, w.BT, w.Cl, w.C));
  out->push_back(op(OpKind::kAttentionBackward, B, T * w.SP, w.Cl / w.SP, w.NHl / w.SP));
  rope_ops(c, w, B, T, OpKind::kRopeBackward, out);
  qkv_ops(c, w, OpKind::kLinearBackward, out);
  out->push_back(op(norm(c, false), w.BT, w.C));
}

}  // namespace

const char* op_kind_name(OpKind k) { return kNames[static_cast<int>(k)]; }

bool parse_op_kind(const std::string& name, OpKind* out) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    if (name == kNames[i]) {
      *out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

std::string OpCall::key() const {
  std::string s = op_kind_name(kind);
  for (int i = 0; i < arity(kind); ++i) s += " " + std::to_string(dims[i]);
  return s;
}

double OpCall::work() const {
  const double a = static_cast<double>(dims[0]), b = static_cast<double>(dims[1]), c = static_cast<double>(dims[2]),
               d = static_cast<double>(dims[3]);
  switch (kind) {
    case OpKind::kLinearForward:
      return 2.0 * a * b * c;
    case OpKind::kLinearBackward:
      return 4.0 * a * b * c;
    case OpKind::kAttentionForward:  // q k^T and att v over the causal half
      return 2.0 * a * b * b * c;
    case OpKind::kAttentionBackward:
      return 4.0 * a * b * b * c;
    case OpKind::kRopeForward:
    case OpKind::kRopeBackward:
      return a * b * c * d;
    case OpKind::kEncoderForward:
    case OpKind::kEncoderBackward:
      return a * b * c;
    case OpKind::kLayerNormForward:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormForward:
    case OpKind::kRmsNormBackward:
    case OpKind::kXentForward:
    case OpKind::kXentBackward:
      return a * b;
    default:
      return a;
  }
}

bool parse_op_key(const std::string& key, OpCall* out) {
  std::istringstream in(key);
  std::string name;
  if (!(in >> name) || !parse_op_kind(name, &out->kind)) return false;
  for (int i = 0; i < 4; ++i) out->dims[i] = 0;
  for (int i = 0; i < arity(out->kind); ++i) {
    if (!(in >> out->dims[i]) || out->dims[i] <= 0) return false;
  }
  std::string rest;
  return !(in >> rest);
}

std::vector<OpCall> forward_ops(const GptConfig& c, const GptLayout& layout, int B, int T) {
  const Widths w = widths(c, layout, B, T);
  std::vector<OpCall> out;
  if (layout.embedding) out.push_back(op(OpKind::kEncoderForward, B, T, w.C));
  for (size_t i = 0; i < layout.blocks(c).size(); ++i) block_forward(c, w, B, T, &out);
  if (layout.head) {
    out.push_back(op(norm(c, true), w.BT, w.C));
    out.push_back(op(OpKind::kLinearForward, w.BT, w.C, w.Vl));
    out.push_back(op(OpKind::kXentForward, w.BT, w.Vl));
  }
  return out;
}

std::vector<OpCall> backward_ops(const GptConfig& c, const GptLayout& layout, int B, int T,
                                 const std::vector<bool>& checkpoint) {
  const Widths w = widths(c, layout, B, T);
  std::vector<OpCall> out;
  if (layout.head) {
    out.push_back(op(OpKind::kXentBackward, w.BT, w.Vl));
    out.push_back(op(OpKind::kLinearBackward, w.BT, w.C, w.Vl));
    out.push_back(op(norm(c, false), w.BT, w.C));
  }
  const std::vector<int> blocks = layout.blocks(c);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const int l = *it;
    if (static_cast<size_t>(l) < checkpoint.size() && checkpoint[static_cast<size_t>(l)]) {
      block_forward(c, w, B, T, &out);  // the recompute
    }
    block_backward(c, w, B, T, &out);
  }
  if (layout.embedding) out.push_back(op(OpKind::kEncoderBackward, B, T, w.C));
  return out;
}

std::vector<OpCall> calibration_calls(const GptConfig& c, int T, const std::vector<int>& micro_batches,
                                      const std::vector<int>& tp_degrees) {
  std::vector<OpCall> out;
  std::set<std::string> seen;
  const std::vector<bool> all(static_cast<size_t>(c.n_layer), true);
  for (int tp : tp_degrees) {
    GptConfig m = c;  // the vocabulary padded for tp as load_run_config pads it
    if (tp > 1 && m.padded_vocab_size == 0) m.padded_vocab_size = (m.vocab_size + tp - 1) / tp * tp;
    GptLayout l;
    l.tp_size = tp;
    if (!l.validate(m).ok()) continue;
    l.first_block = 0;
    l.end_block = std::min(1, m.n_layer);  // one block shows every block's calls
    for (int B : micro_batches) {
      for (const auto& list : {forward_ops(m, l, B, T), backward_ops(m, l, B, T, all)}) {
        for (const OpCall& o : list) {
          if (seen.insert(o.key()).second) out.push_back(o);
        }
      }
    }
  }
  return out;
}

double gemm_flops(const std::vector<OpCall>& ops) {
  double f = 0.0;
  for (const OpCall& o : ops) f += o.is_gemm() ? o.work() : 0.0;
  return f;
}

}  // namespace zt
