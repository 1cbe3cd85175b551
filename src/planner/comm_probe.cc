// Collective measurements; see comm_probe.h.
#include "planner/comm_probe.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <thread>

#include "core/timer.h"

namespace zt {

namespace {

constexpr int kReps = 5;           // timed repetitions per size (the median is kept)
constexpr int kIdleMs = 20;        // before each: the link idles, as between training's collectives

// Equal parts of n floats for P ranks (the last takes the rest).
std::vector<size_t> parts(size_t n, int P) {
  std::vector<size_t> c(static_cast<size_t>(P), n / static_cast<size_t>(P));
  c.back() += n - c.front() * static_cast<size_t>(P);
  return c;
}

StatusOr<double> one(ProcessGroup& g, Collective c, std::vector<float>& buf) {
  const size_t n = buf.size();
  ZT_RETURN_IF_ERROR(g.barrier()->wait());
  const double start = now_seconds();
  switch (c) {
    case Collective::kAllReduce:
      ZT_RETURN_IF_ERROR(g.all_reduce(buf.data(), n, CommDType::kF32)->wait());
      break;
    case Collective::kReduceScatter:
      ZT_RETURN_IF_ERROR(g.reduce_scatter(buf.data(), parts(n, g.size()))->wait());
      break;
    case Collective::kAllGather:
      ZT_RETURN_IF_ERROR(g.all_gather(buf.data(), parts(n, g.size()))->wait());
      break;
    case Collective::kP2p:
      if (g.rank() == 0) {
        ZT_RETURN_IF_ERROR(g.send(buf.data(), n * sizeof(float), 1, 7)->wait());
        ZT_RETURN_IF_ERROR(g.recv(buf.data(), n * sizeof(float), 1, 8)->wait());
      } else if (g.rank() == 1) {
        ZT_RETURN_IF_ERROR(g.recv(buf.data(), n * sizeof(float), 0, 7)->wait());
        ZT_RETURN_IF_ERROR(g.send(buf.data(), n * sizeof(float), 0, 8)->wait());
      }
      return (now_seconds() - start) / 2.0;
  }
  return now_seconds() - start;
}

// The median of kReps timings of `c` on `bytes`, each after the link idled.
StatusOr<double> median_seconds(ProcessGroup& g, Collective c, size_t bytes) {
  std::vector<float> buf(std::max<size_t>(bytes / sizeof(float), static_cast<size_t>(g.size())), 1.0f);
  for (int w = 0; w < 2; ++w) ZT_RETURN_IF_ERROR(one(g, c, buf).status());  // warm: connections, registration, pages
  std::vector<double> t;
  for (int r = 0; r < kReps; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs));
    ZT_ASSIGN_OR_RETURN(const double s, one(g, c, buf));
    t.push_back(s);
  }
  std::nth_element(t.begin(), t.begin() + static_cast<long>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

// Rank 0's medians at `sizes`, broadcast so every rank fits the same points.
StatusOr<std::vector<std::pair<double, double>>> measure(ProcessGroup& g, Collective c, const std::vector<size_t>& sizes) {
  std::vector<double> medians;
  for (size_t bytes : sizes) {
    ZT_ASSIGN_OR_RETURN(const double m, median_seconds(g, c, bytes));
    medians.push_back(m);
  }
  ZT_RETURN_IF_ERROR(g.broadcast(medians.data(), medians.size() * sizeof(double), 0)->wait());
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < sizes.size(); ++i) points.emplace_back(static_cast<double>(sizes[i]), medians[i]);
  return points;
}

}  // namespace

std::vector<size_t> validation_sizes(const std::vector<size_t>& sizes) {
  std::vector<size_t> s = sizes, out;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const size_t mid = static_cast<size_t>(std::sqrt(static_cast<double>(s[i]) * static_cast<double>(s[i + 1]))) / 64 * 64;
    if (mid > s[i] && mid < s[i + 1]) out.push_back(mid);
  }
  return out;
}

StatusOr<std::map<std::string, CollectiveFit>> probe_collectives(ProcessGroup& g, const CommProbeOptions& options) {
  if (g.size() < 2) return Status::InvalidArgument("measuring collectives needs at least 2 ranks");
  std::vector<size_t> sizes = options.sizes;
  if (sizes.empty()) {
    for (size_t b = 4096; b <= (64u << 20); b *= 4) sizes.push_back(b);
  }
  const std::vector<size_t> checks = validation_sizes(sizes);
  std::map<std::string, CollectiveFit> fits;
  for (int k = 0; k < kNumCollectives; ++k) {
    const Collective c = static_cast<Collective>(k);
    ZT_ASSIGN_OR_RETURN(const auto points, measure(g, c, sizes));
    ZT_ASSIGN_OR_RETURN(const auto held_out, measure(g, c, checks));
    CollectiveFit fit = fit_collective(c, g.size(), points);
    validate_fit(&fit, held_out);
    fits[collective_name(c)] = std::move(fit);
  }
  return fits;
}

}  // namespace zt
