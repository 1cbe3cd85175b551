// MoE routing (issue 30): the gate that sends each of N tokens to k of E experts, with
// DeepSpeed's semantics (deepspeed/moe/sharded_moe.py: top1gating, top2gating,
// topkgating) and Mixtral's / Qwen2-MoE's (a softmax top-k, renormalised or not, nothing
// dropped), forward and backward, in fp32 on the host. Routing is sequential bookkeeping
// over tokens, the same host code for every backend: the model brings a layer's router
// logits to the host and takes the choices back to backend memory (nn/gpt_moe.cc).
//
// Forward, from the router logits (N, E):
//   gates = softmax(logits) per token;
//   choices: k = 1 takes argmax(gates) (argmax(logits + gumbel) with noise RSample);
//     k = 2 takes argmax(gates), then argmax(logits (+ gumbel with second_sampling)) over
//     the other experts; k > 2 and Mixtral take the k largest gates (ties: lower expert);
//   capacity (drop_tokens): ceil(N / E * capacity_factor * k), at least min_capacity; each
//     expert keeps at most that many tokens: k = 1 the first in token order, or with RTS
//     those of largest uniform draw; k = 2 by position, first choices before second
//     choices; k > 2 by gate value (policy kProbs) or position (kPosition);
//   without drop_tokens the capacity is the largest expert count (k = 1: at most N);
//   weights: k = 1 the chosen gate; k >= 2 the kept gates divided by their sum (at least
//     FLT_EPSILON); Mixtral with renormalize as k >= 2, else the gates themselves;
//   location: the token's slot in its expert's buffer, counting kept tokens in token
//     order (k = 2: the second choices after every first choice);
//   l_aux (DeepSpeed's balance loss, E sum_e me_e ce_e, k > 2 divided by k): me the mean
//     gate, ce the fraction of tokens whose first choice (k <= 2) or any choice (k > 2)
//     is e, before dropping. Mixtral's loss is the model's (across layers) and not here.
// Backward: the gradient of the weights (N, k) and of a balance loss to the logits, through
// the normalisation and the softmax (choices and drops are constants, as in autograd). Both
// balance losses are linear in the mean gates, so their gradient to each gate is one
// constant per expert: deepspeed_aux_dgate for l_aux, mixtral_balance for HF's loss.
//
// HF Mixtral's and Qwen2-MoE's balance loss (transformers' load_balancing_loss_func, no
// attention mask) spans every MoE layer: with the layers' tokens concatenated (T in all),
// aux = E sum_e P_e F_e, P_e the mean gate and F_e the choices of e over all k slots / T.
// Invariants: tokens are processed in order, so every result is deterministic; the noise
// arrays are the caller's (its RNG), which lets a test hand the same draws to PyTorch.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace zt {

enum class MoeRouting { kDeepSpeed, kMixtral };
enum class MoeDropPolicy { kProbs, kPosition };  // DeepSpeed's topkgating drop_policy

struct MoeGateOptions {
  MoeRouting routing = MoeRouting::kDeepSpeed;
  int k = 1;
  double capacity_factor = 1.0;
  int min_capacity = 8;
  bool drop_tokens = true;
  bool use_rts = true;             // k = 1: random token selection (needs `uniform`)
  bool rsample = false;            // k = 1: noisy_gate_policy RSample (needs `gumbel`)
  bool second_sampling = true;     // k = 2: top2_2nd_expert_sampling (needs `gumbel`)
  MoeDropPolicy drop_policy = MoeDropPolicy::kProbs;
  bool renormalize = true;         // Mixtral: divide the top-k gates by their sum (Qwen2-MoE's norm_topk_prob)
};

// The caller's draws, (N, E) each, or empty where the options do not use them.
struct MoeGateNoise {
  std::vector<float> gumbel;   // standard Gumbel
  std::vector<float> uniform;  // U(0, 1)
};

struct MoeGateResult {
  std::vector<float> gates;      // (N, E) softmax, kept for backward
  std::vector<int32_t> expert;   // (N, k) chosen expert, or -1 where the token was dropped
  std::vector<int32_t> location; // (N, k) slot in the expert's buffer (-1 when dropped)
  std::vector<float> weight;     // (N, k) combine weight (0 when dropped)
  std::vector<int64_t> counts;   // (E) tokens choosing each expert, before dropping
  std::vector<float> first_fraction;  // (E) ce: l_aux's fraction of tokens per expert
  int64_t capacity = 0;
  double l_aux = 0.0;
};

// Which draws the options need: Gumbel noise (DeepSpeed's RSample, top-2's second-expert
// sampling), uniform draws (random token selection when top-1 drops tokens).
struct MoeNoiseNeeds {
  bool gumbel = false;
  bool uniform = false;
};
MoeNoiseNeeds moe_gate_noise_needs(const MoeGateOptions& o);

// InvalidArgument for a k outside [1, E], a missing noise array, or DeepSpeed's k = 1
// with fewer tokens than min_capacity (its assertion).
Status validate_moe_gate(const MoeGateOptions& o, int64_t N, int E, const MoeGateNoise& noise);
// The largest capacity moe_gate_forward returns for N tokens (what a layer's expert
// buffers are allocated for): DeepSpeed's capacity with drop_tokens, else N (an expert
// takes each token at most once).
int64_t moe_capacity_bound(const MoeGateOptions& o, int64_t N, int E);
StatusOr<MoeGateResult> moe_gate_forward(const float* logits, int64_t N, int E, const MoeGateOptions& o,
                                         const MoeGateNoise& noise);
// d(dl_aux * l_aux) / d gate[t][e], the same for every token: (E) values.
std::vector<double> deepspeed_aux_dgate(const MoeGateResult& r, const MoeGateOptions& o, int64_t N, int E, double dl_aux);

// HF's balance loss over the layers' routings (N tokens each, the same E and k), and the
// gradient of coef * aux to each gate (E values, the same for every layer and token).
struct MixtralBalance {
  double aux = 0.0;
  std::vector<double> dgate;
};
MixtralBalance mixtral_balance(const std::vector<const MoeGateResult*>& layers, int64_t N, int E, int k, double coef);

// dlogits (N, E) = d(sum weight * dweight) / dlogits, plus dgate[e] on every gate of expert e
// (a balance loss's gradient; empty for none).
void moe_gate_backward(float* dlogits, const MoeGateResult& r, const float* dweight, const std::vector<double>& dgate,
                       int64_t N, int E, const MoeGateOptions& o);

}  // namespace zt
