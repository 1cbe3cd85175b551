// Roles, shards and push buckets of a parameter-server job; see ps_layout.h.
#include "parallel/param_server/ps_layout.h"

#include <algorithm>

#include "core/check.h"

namespace zt {

PsLayout::PsLayout(const ParamTable& table, int n_layer, int servers, int workers, size_t bucket_elems)
    : servers_(servers), workers_(workers), n_layer_(n_layer), partition_(table.numel(), servers) {
  ZT_CHECK(servers >= 1 && workers >= 1, "a parameter-server job needs servers and workers (%d, %d)", servers, workers);
  const size_t slots = static_cast<size_t>(n_layer) + 2;
  bucket_of_layer_.assign(slots, -1);
  layer_range_.resize(slots);
  std::vector<int> order;  // backward completion order
  for (int l = n_layer; l >= -1; --l) order.push_back(l);
  for (int layer : order) {
    const ElementRange r = table.layer_range(layer);
    layer_range_[static_cast<size_t>(layer + 1)] = r;
    const bool fits = !buckets_.empty() && buckets_.back().range.size() + r.size() <= bucket_elems;
    if (!fits) buckets_.push_back(PsBucket{r, {}});
    PsBucket& b = buckets_.back();
    ZT_CHECK(b.layers.empty() || r.end == b.range.begin, "layer %d is not adjacent to the previous layer", layer);
    b.range.begin = r.begin;
    b.layers.push_back(layer);
    bucket_of_layer_[static_cast<size_t>(layer + 1)] = static_cast<int>(buckets_.size()) - 1;
  }
  ZT_CHECK(buckets_.back().range.begin == 0 && buckets_.front().range.end == table.numel(),
           "the layers do not cover the parameter arena");
  reply_slices_.resize(static_cast<size_t>(servers));
  for (int s = 0; s < servers; ++s) {
    for (int b = static_cast<int>(buckets_.size()) - 1; b >= 0; --b) {
      const ElementRange r = slice(b, s);
      if (r.size() > 0) reply_slices_[static_cast<size_t>(s)].push_back(r);
    }
  }
}

ElementRange PsLayout::slice(int bucket, int server) const {
  const ElementRange b = buckets_[static_cast<size_t>(bucket)].range, s = shard(server);
  const size_t lo = std::max(b.begin, s.begin), hi = std::min(b.end, s.end);
  return hi > lo ? ElementRange{lo, hi} : ElementRange{lo, lo};
}

void PsLayout::servers_of(ElementRange range, int* first, int* last) const {
  const size_t per = partition_.shard_size();
  ZT_CHECK(range.size() > 0 && per > 0, "servers_of an empty range");
  *first = static_cast<int>(range.begin / per);
  *last = std::min(servers_ - 1, static_cast<int>((range.end - 1) / per));
}

}  // namespace zt
