// MoE routing, forward and backward; see moe_gate.h.
#include "kernels/moe_gate.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <string>

namespace zt {

namespace {

// The row's softmax in double, rounded to float.
void softmax_row(float* g, const float* x, int E) {
  double m = x[0];
  for (int e = 1; e < E; ++e) m = std::max(m, static_cast<double>(x[e]));
  double s = 0.0;
  for (int e = 0; e < E; ++e) s += std::exp(static_cast<double>(x[e]) - m);
  for (int e = 0; e < E; ++e) g[e] = static_cast<float>(std::exp(static_cast<double>(x[e]) - m) / s);
}

// The first maximum of v[e] over the experts not excluded (torch.argmax's tie rule).
int argmax_row(const float* v, int E, int excluded = -1) {
  int best = -1;
  for (int e = 0; e < E; ++e) {
    if (e != excluded && (best < 0 || v[e] > v[best])) best = e;
  }
  return best;
}

// The k largest of g, largest first, ties to the lower expert.
void topk_row(int32_t* out, const float* g, int E, int k) {
  std::vector<int32_t> idx(static_cast<size_t>(E));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return g[a] > g[b]; });
  std::copy(idx.begin(), idx.begin() + k, out);
}

// Every token's choices (N, k), before any drop.
void choose(MoeGateResult* r, const float* logits, int64_t N, int E, const MoeGateOptions& o, const MoeGateNoise& n) {
  const int k = o.k;
  std::vector<float> noisy(static_cast<size_t>(E));
  for (int64_t t = 0; t < N; ++t) {
    const float* g = r->gates.data() + t * E;
    int32_t* ex = r->expert.data() + t * k;
    if (o.routing == MoeRouting::kMixtral || k > 2) {
      topk_row(ex, g, E, k);
      continue;
    }
    const bool noise = k == 1 ? o.rsample : o.second_sampling;
    for (int e = 0; e < E; ++e) noisy[e] = noise ? logits[t * E + e] + n.gumbel[t * E + e] : logits[t * E + e];
    if (k == 1) {
      ex[0] = argmax_row(o.rsample ? noisy.data() : g, E);
    } else {
      ex[0] = argmax_row(g, E);
      ex[1] = argmax_row(noisy.data(), E, ex[0]);
    }
  }
}

int64_t capacity_of(int64_t N, int E, double factor, int min_capacity) {
  const int64_t c = static_cast<int64_t>(std::ceil(static_cast<double>(N) / E * factor));
  return std::max<int64_t>(c, min_capacity);
}

// DeepSpeed's k = 1 selection: per expert the first `cap` tokens, or with RTS the `cap`
// of largest uniform draw; the dropped get expert -1.
void drop_top1(MoeGateResult* r, int64_t N, int E, const MoeGateOptions& o, const MoeGateNoise& n) {
  for (int e = 0; e < E; ++e) {
    std::vector<int64_t> mine;
    for (int64_t t = 0; t < N; ++t) {
      if (r->expert[static_cast<size_t>(t)] == e) mine.push_back(t);
    }
    if (static_cast<int64_t>(mine.size()) <= r->capacity) continue;
    if (o.use_rts) {
      std::stable_sort(mine.begin(), mine.end(), [&](int64_t a, int64_t b) {
        return n.uniform[static_cast<size_t>(a * E + e)] > n.uniform[static_cast<size_t>(b * E + e)];
      });
    }
    for (size_t i = static_cast<size_t>(r->capacity); i < mine.size(); ++i) r->expert[static_cast<size_t>(mine[i])] = -1;
  }
}

// Locations counted in token order per expert; with `slot_major` (DeepSpeed's k = 2) all
// first choices before any second choice. Drops past `cap` when drop_by_position.
void place(MoeGateResult* r, int64_t N, int E, int k, bool slot_major, bool drop_by_position) {
  std::vector<int64_t> next(static_cast<size_t>(E), 0);
  auto visit = [&](int64_t t, int j) {
    int32_t& e = r->expert[static_cast<size_t>(t * k + j)];
    if (e < 0) return;
    const int64_t loc = next[static_cast<size_t>(e)]++;
    if (drop_by_position && loc >= r->capacity) {
      e = -1;
      return;
    }
    r->location[static_cast<size_t>(t * k + j)] = static_cast<int32_t>(loc);
  };
  if (slot_major) {
    for (int j = 0; j < k; ++j) {
      for (int64_t t = 0; t < N; ++t) visit(t, j);
    }
  } else {
    for (int64_t t = 0; t < N; ++t) {
      for (int j = 0; j < k; ++j) visit(t, j);
    }
  }
}

// DeepSpeed's topkgating drop_policy "probs": per expert the `cap` tokens of largest gate
// (ties to the lower token).
void drop_by_probs(MoeGateResult* r, int64_t N, int E, int k) {
  for (int e = 0; e < E; ++e) {
    std::vector<int64_t> mine;  // flat (t, j) indices
    for (int64_t i = 0; i < N * k; ++i) {
      if (r->expert[static_cast<size_t>(i)] == e) mine.push_back(i);
    }
    if (static_cast<int64_t>(mine.size()) <= r->capacity) continue;
    std::stable_sort(mine.begin(), mine.end(), [&](int64_t a, int64_t b) {
      return r->gates[static_cast<size_t>(a / k * E + e)] > r->gates[static_cast<size_t>(b / k * E + e)];
    });
    for (size_t i = static_cast<size_t>(r->capacity); i < mine.size(); ++i) r->expert[static_cast<size_t>(mine[i])] = -1;
  }
}

// l_aux's fraction per expert (first choices for k <= 2, any choice above) and counts.
void count(MoeGateResult* r, int64_t N, int E, const MoeGateOptions& o) {
  const int k = o.k;
  const bool deepspeed_first = o.routing == MoeRouting::kDeepSpeed && k <= 2;
  std::vector<int64_t> chosen(static_cast<size_t>(E), 0);
  for (int64_t t = 0; t < N; ++t) {
    for (int j = 0; j < k; ++j) {
      const int32_t e = r->expert[static_cast<size_t>(t * k + j)];
      r->counts[static_cast<size_t>(e)] += 1;
      if (!deepspeed_first || j == 0) chosen[static_cast<size_t>(e)] += 1;
    }
  }
  for (int e = 0; e < E; ++e) {
    r->first_fraction[static_cast<size_t>(e)] = static_cast<float>(static_cast<double>(chosen[static_cast<size_t>(e)]) / N);
  }
  if (o.routing == MoeRouting::kMixtral) return;  // its balance loss is the model's, over every layer
  double sum = 0.0;
  for (int e = 0; e < E; ++e) {
    double me = 0.0;
    for (int64_t t = 0; t < N; ++t) me += r->gates[static_cast<size_t>(t * E + e)];
    sum += me / static_cast<double>(N) * r->first_fraction[static_cast<size_t>(e)];
  }
  r->l_aux = sum * E / (k > 2 ? k : 1);
}

// The scale of l_aux's gradient to each gate: E, or E / k above k = 2 (0 for Mixtral).
double aux_scale(const MoeGateOptions& o, int E) {
  if (o.routing == MoeRouting::kMixtral) return 0.0;
  return o.k > 2 ? static_cast<double>(E) / o.k : static_cast<double>(E);
}

bool normalizes(const MoeGateOptions& o) {
  return o.routing == MoeRouting::kDeepSpeed ? o.k >= 2 : o.renormalize;
}

void weigh(MoeGateResult* r, int64_t N, int E, const MoeGateOptions& o) {
  const int k = o.k;
  for (int64_t t = 0; t < N; ++t) {
    double sum = 0.0;
    for (int j = 0; j < k; ++j) {
      const int32_t e = r->expert[static_cast<size_t>(t * k + j)];
      if (e >= 0) sum += r->gates[static_cast<size_t>(t * E + e)];
    }
    const double denom = normalizes(o) ? std::max(sum, static_cast<double>(FLT_EPSILON)) : 1.0;
    for (int j = 0; j < k; ++j) {
      const int32_t e = r->expert[static_cast<size_t>(t * k + j)];
      r->weight[static_cast<size_t>(t * k + j)] =
          e >= 0 ? static_cast<float>(r->gates[static_cast<size_t>(t * E + e)] / denom) : 0.0f;
    }
  }
}

}  // namespace

int64_t moe_capacity_bound(const MoeGateOptions& o, int64_t N, int E) {
  if (o.routing == MoeRouting::kMixtral || !o.drop_tokens) return N;
  return capacity_of(N, E, o.capacity_factor * o.k, o.min_capacity);
}

MoeNoiseNeeds moe_gate_noise_needs(const MoeGateOptions& o) {
  const bool ds = o.routing == MoeRouting::kDeepSpeed;
  return {ds && ((o.k == 1 && o.rsample) || (o.k == 2 && o.second_sampling)), ds && o.k == 1 && o.drop_tokens && o.use_rts};
}

Status validate_moe_gate(const MoeGateOptions& o, int64_t N, int E, const MoeGateNoise& noise) {
  if (E < 1 || o.k < 1 || o.k > E) {
    return Status::InvalidArgument("MoE gate: experts per token " + std::to_string(o.k) + " must be in [1, " +
                                   std::to_string(E) + "]");
  }
  const size_t NE = static_cast<size_t>(N) * static_cast<size_t>(E);
  const bool ds = o.routing == MoeRouting::kDeepSpeed;
  const MoeNoiseNeeds needs = moe_gate_noise_needs(o);
  if (needs.gumbel && noise.gumbel.size() != NE) return Status::InvalidArgument("MoE gate: Gumbel noise (N, E) missing");
  if (needs.uniform && noise.uniform.size() != NE) {
    return Status::InvalidArgument("MoE gate: random token selection needs uniform draws (N, E)");
  }
  if (ds && o.k == 1 && N < o.min_capacity) {
    return Status::InvalidArgument("MoE gate: " + std::to_string(N) + " tokens, fewer than min_capacity " +
                                   std::to_string(o.min_capacity) + " (set min_capacity to 0 or a larger batch)");
  }
  return Status::OK();
}

StatusOr<MoeGateResult> moe_gate_forward(const float* logits, int64_t N, int E, const MoeGateOptions& o,
                                         const MoeGateNoise& noise) {
  ZT_RETURN_IF_ERROR(validate_moe_gate(o, N, E, noise));
  const int k = o.k;
  MoeGateResult r;
  r.gates.resize(static_cast<size_t>(N * E));
  r.expert.assign(static_cast<size_t>(N * k), -1);
  r.location.assign(static_cast<size_t>(N * k), -1);
  r.weight.assign(static_cast<size_t>(N * k), 0.0f);
  r.counts.assign(static_cast<size_t>(E), 0);
  r.first_fraction.assign(static_cast<size_t>(E), 0.0f);
  for (int64_t t = 0; t < N; ++t) softmax_row(r.gates.data() + t * E, logits + t * E, E);
  choose(&r, logits, N, E, o, noise);
  count(&r, N, E, o);
  const bool ds = o.routing == MoeRouting::kDeepSpeed;
  const bool drop = ds && o.drop_tokens;
  if (drop) {
    r.capacity = capacity_of(N, E, o.capacity_factor * k, o.min_capacity);
  } else {
    r.capacity = *std::max_element(r.counts.begin(), r.counts.end());
    if (ds && k == 1) r.capacity = std::min<int64_t>(r.capacity, N);
  }
  if (drop && k == 1) drop_top1(&r, N, E, o, noise);
  if (drop && k > 2 && o.drop_policy == MoeDropPolicy::kProbs) drop_by_probs(&r, N, E, k);
  const bool by_position = drop && (k == 2 || (k > 2 && o.drop_policy == MoeDropPolicy::kPosition));
  place(&r, N, E, k, /*slot_major=*/ds && k == 2, by_position);
  weigh(&r, N, E, o);
  return r;
}

std::vector<double> deepspeed_aux_dgate(const MoeGateResult& r, const MoeGateOptions& o, int64_t N, int E, double dl_aux) {
  std::vector<double> d(static_cast<size_t>(E));
  const double scale = dl_aux * aux_scale(o, E) / static_cast<double>(N);
  for (int e = 0; e < E; ++e) d[static_cast<size_t>(e)] = scale * r.first_fraction[static_cast<size_t>(e)];
  return d;
}

MixtralBalance mixtral_balance(const std::vector<const MoeGateResult*>& layers, int64_t N, int E, int k, double coef) {
  const double T = static_cast<double>(N) * static_cast<double>(layers.size());
  std::vector<double> f(static_cast<size_t>(E), 0.0), p(static_cast<size_t>(E), 0.0);
  for (const MoeGateResult* r : layers) {
    for (int64_t i = 0; i < N * k; ++i) f[static_cast<size_t>(r->expert[static_cast<size_t>(i)])] += 1.0;
    for (int64_t i = 0; i < N * E; ++i) p[static_cast<size_t>(i % E)] += r->gates[static_cast<size_t>(i)];
  }
  MixtralBalance b;
  b.dgate.resize(static_cast<size_t>(E));
  for (int e = 0; e < E; ++e) {
    const double fe = f[static_cast<size_t>(e)] / T, pe = p[static_cast<size_t>(e)] / T;
    b.aux += E * fe * pe;
    b.dgate[static_cast<size_t>(e)] = coef * E * fe / T;
  }
  return b;
}

void moe_gate_backward(float* dlogits, const MoeGateResult& r, const float* dweight, const std::vector<double>& dgate,
                       int64_t N, int E, const MoeGateOptions& o) {
  const int k = o.k;
  std::vector<double> dg(static_cast<size_t>(E));
  for (int64_t t = 0; t < N; ++t) {
    const float* g = r.gates.data() + t * E;
    for (int e = 0; e < E; ++e) dg[static_cast<size_t>(e)] = dgate.empty() ? 0.0 : dgate[static_cast<size_t>(e)];
    double sum = 0.0, dot = 0.0;  // the kept gates' sum, and sum_j dW_j g_j
    for (int j = 0; j < k; ++j) {
      const int32_t e = r.expert[static_cast<size_t>(t * k + j)];
      if (e < 0) continue;
      sum += g[e];
      dot += static_cast<double>(dweight[t * k + j]) * g[e];
    }
    const bool norm = normalizes(o);
    const bool clamped = norm && sum < FLT_EPSILON;
    const double denom = !norm ? 1.0 : clamped ? FLT_EPSILON : sum;
    for (int j = 0; j < k; ++j) {
      const int32_t e = r.expert[static_cast<size_t>(t * k + j)];
      if (e < 0) continue;
      double d = static_cast<double>(dweight[t * k + j]) / denom;
      if (norm && !clamped) d -= dot / (denom * denom);
      dg[static_cast<size_t>(e)] += d;
    }
    double gdg = 0.0;
    for (int e = 0; e < E; ++e) gdg += static_cast<double>(g[e]) * dg[static_cast<size_t>(e)];
    for (int e = 0; e < E; ++e) dlogits[t * E + e] = static_cast<float>(g[e] * (dg[static_cast<size_t>(e)] - gdg));
  }
}

}  // namespace zt
