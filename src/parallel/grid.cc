// RankGrid rank maths.
#include "parallel/grid.h"

namespace zt {

StatusOr<RankGrid> RankGrid::create(int world_size, int tp, int dp, int pp, int ep, int sp, int hpz) {
  if (tp < 1 || dp < 1 || pp < 1) {
    return Status::InvalidArgument("parallel degrees must be >= 1, got tp=" + std::to_string(tp) + " dp=" +
                                   std::to_string(dp) + " pp=" + std::to_string(pp));
  }
  if (tp * dp * pp != world_size) {
    return Status::InvalidArgument("tp=" + std::to_string(tp) + " x dp=" + std::to_string(dp) + " x pp=" +
                                   std::to_string(pp) + " = " + std::to_string(tp * dp * pp) +
                                   " does not match the " + std::to_string(world_size) + " ranks launched");
  }
  if (ep < 1 || dp % ep != 0) {
    return Status::InvalidArgument("/parallel/ep (model.moe.ep_size): " + std::to_string(ep) + " must divide the data-parallel size " +
                                   std::to_string(dp) + " (expert-parallel groups are made of data-parallel ranks)");
  }
  if (sp < 1 || dp % sp != 0) {
    return Status::InvalidArgument("/sequence_parallel_size: " + std::to_string(sp) + " must divide the data-parallel size " +
                                   std::to_string(dp) + " (sequence-parallel groups are made of data-parallel ranks)");
  }
  if (sp > 1 && ep > 1) {
    return Status::Unimplemented("/sequence_parallel_size: " + std::to_string(sp) +
                                 " with expert parallelism is not supported yet (sp and ep both split the dp groups)");
  }
  if (hpz < 1 || dp % hpz != 0) {
    return Status::InvalidArgument("/zero_optimization/zero_hpz_partition_size: " + std::to_string(hpz) +
                                   " must divide the data-parallel size " + std::to_string(dp));
  }
  if (hpz > 1 && ep > 1) {
    return Status::Unimplemented("/zero_optimization/zero_hpz_partition_size: " + std::to_string(hpz) +
                                 " with expert parallelism is not supported yet (ZeRO shards over the expert-data-parallel group)");
  }
  return RankGrid(tp, dp, pp, ep, sp, hpz);
}

int RankGrid::degree(GridAxis axis) const {
  switch (axis) {
    case GridAxis::kTp: return tp_;
    case GridAxis::kDp: return dp_;
    case GridAxis::kPp: return pp_;
    case GridAxis::kEp: return ep_;
    case GridAxis::kEdp: return dp_ / ep_;
    case GridAxis::kSp: return sp_;
    case GridAxis::kHpz: return hpz_;
  }
  return 1;
}

GridCoord RankGrid::coord(int rank) const {
  GridCoord c;
  c.tp = rank % tp_;
  c.dp = (rank / tp_) % dp_;
  c.pp = rank / (tp_ * dp_);
  return c;
}

int RankGrid::rank(const GridCoord& c) const { return c.tp + tp_ * (c.dp + dp_ * c.pp); }

std::vector<int> RankGrid::group_of(int r, GridAxis axis) const {
  GridCoord c = coord(r);
  std::vector<int> out;
  const int ep_first = c.dp / ep_ * ep_, ep_rank = c.dp % ep_, sp_first = c.dp / sp_ * sp_, hpz_first = c.dp / hpz_ * hpz_;
  for (int i = 0; i < degree(axis); ++i) {
    if (axis == GridAxis::kTp) c.tp = i;
    if (axis == GridAxis::kDp) c.dp = i;
    if (axis == GridAxis::kPp) c.pp = i;
    if (axis == GridAxis::kEp) c.dp = ep_first + i;
    if (axis == GridAxis::kEdp) c.dp = i * ep_ + ep_rank;
    if (axis == GridAxis::kSp) c.dp = sp_first + i;
    if (axis == GridAxis::kHpz) c.dp = hpz_first + i;
    out.push_back(rank(c));
  }
  return out;
}

std::vector<std::vector<int>> RankGrid::groups(GridAxis axis) const {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < world_size(); ++r) {
    std::vector<int> g = group_of(r, axis);
    if (g.front() == r) out.push_back(std::move(g));
  }
  return out;
}

int RankGrid::group_color(int r, GridAxis axis) const { return group_of(r, axis).front(); }

}  // namespace zt
