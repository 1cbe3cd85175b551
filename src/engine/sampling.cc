// Sampling loop and the top-k / temperature draw.
#include "engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.h"

namespace zt {

int32_t sample_from_logits(const float* logits, int V, double temperature, int top_k, Rng& rng) {
  if (temperature <= 0.0) return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);
  std::vector<int32_t> idx(static_cast<size_t>(V));
  std::iota(idx.begin(), idx.end(), 0);
  const int k = (top_k > 0 && top_k < V) ? top_k : V;
  // Ties broken by index so the draw does not depend on the sort's stability.
  auto by_logit = [logits](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), by_logit);
  std::vector<double> p(static_cast<size_t>(k));
  const double top = logits[idx[0]];
  double sum = 0.0;
  for (int i = 0; i < k; ++i) {
    p[static_cast<size_t>(i)] = std::exp((logits[idx[static_cast<size_t>(i)]] - top) / temperature);
    sum += p[static_cast<size_t>(i)];
  }
  double u = rng.uniform() * sum;
  for (int i = 0; i < k; ++i) {
    u -= p[static_cast<size_t>(i)];
    if (u <= 0.0) return idx[static_cast<size_t>(i)];
  }
  return idx[static_cast<size_t>(k - 1)];
}

std::vector<int32_t> generate(GptModel& model, const std::vector<int32_t>& prompt, const SampleOptions& o) {
  ZT_CHECK(!prompt.empty(), "generate needs a non-empty prompt");
  const int V = model.config().vocab_size, Vp = model.config().padded_vocab();
  const int window = model.max_seq();
  std::vector<int32_t> context = prompt, out;
  Rng rng(o.seed);
  std::vector<float> row(static_cast<size_t>(Vp));
  for (int64_t n = 0; n < o.max_tokens; ++n) {
    const int T = static_cast<int>(std::min<size_t>(context.size(), static_cast<size_t>(window)));
    const int32_t* x = context.data() + (context.size() - static_cast<size_t>(T));
    const Status st = model.forward(x, 1, T);
    ZT_CHECK(st.ok(), "sampling forward failed: %s", st.to_string().c_str());  // a whole model: no communication
    model.logits_row(T - 1, row.data());
    const int32_t next = sample_from_logits(row.data(), V, o.temperature, o.top_k, rng);
    out.push_back(next);
    context.push_back(next);
    if (next == o.stop_token) break;
  }
  return out;
}

}  // namespace zt
