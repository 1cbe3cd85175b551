// Layouts and communicator bundles for a rank of the grid.
#include "engine/parallel_setup.h"

#include <algorithm>

namespace zt {

StatusOr<GptLayout> layout_for_rank(const GptConfig& config, const RankGrid& grid, int rank, StagePartition method,
                                    int virtual_stages) {
  const GridCoord c = grid.coord(rank);
  const int S = grid.pp(), v = virtual_stages;
  if (v > 1 && (S < 2 || config.n_layer < S * v)) {
    return Status::InvalidArgument("/parallel/virtual_stages: " + std::to_string(v) + " chunks on each of " +
                                   std::to_string(S) + " pipeline stages need pp > 1 and at least pp x virtual_stages = " +
                                   std::to_string(S * v) + " blocks (the model has " + std::to_string(config.n_layer) + ")");
  }
  ZT_ASSIGN_OR_RETURN(std::vector<int> bounds, partition_stages(config, S * v, method));
  GptLayout lay;
  lay.first_block = bounds[static_cast<size_t>(c.pp)];
  lay.end_block = bounds[static_cast<size_t>(c.pp) + 1];
  if (v > 1) {
    std::vector<BlockRange> chunks;
    for (int j = 0; j < v; ++j) {
      const size_t k = static_cast<size_t>(j * S + c.pp);
      chunks.push_back({bounds[k], bounds[k + 1]});
    }
    lay.set_chunks(std::move(chunks));
  }
  lay.embedding = c.pp == 0;
  lay.head = c.pp == grid.pp() - 1;
  lay.tp_rank = c.tp;
  lay.tp_size = grid.tp();
  lay.ep_rank = c.dp % grid.ep();
  lay.ep_size = grid.ep();
  lay.sp_rank = c.dp % grid.sp();
  lay.sp_size = grid.sp();
  ZT_RETURN_IF_ERROR(lay.validate(config));
  return lay;
}

ZeroGroupPlace zero_group_place(const RankGrid& grid, int rank, ZeroStage stage) {
  const int dp = grid.coord(rank).dp;
  if (grid.ep() == 1 || stage == ZeroStage::kNone) return {grid.dp(), dp};
  return {grid.dp() / grid.ep(), dp / grid.ep()};
}

namespace {

// The first and last stage of rank's pipeline, or empty for a middle stage / pp == 1.
std::vector<int> tied_members(const RankGrid& grid, int rank) {
  if (grid.pp() == 1) return {};
  const std::vector<int> pipe = grid.group_of(rank, GridAxis::kPp);
  const int s = grid.coord(rank).pp;
  if (s != 0 && s != grid.pp() - 1) return {};
  return {pipe.front(), pipe.back()};
}

}  // namespace

StatusOr<ParallelGroups> make_mpi_groups(MpiWorld& world, const RankGrid& grid) {
  ParallelGroups g;
  g.world = &world.world();
  const int rank = g.world->rank();
  auto split = [&](GridAxis axis) -> StatusOr<ProcessGroup*> {
    const std::vector<int> members = grid.group_of(rank, axis);
    const int key = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
    ZT_ASSIGN_OR_RETURN(auto group, world.split(grid.group_color(rank, axis), key));
    g.owned.push_back(std::move(group));
    return g.owned.back().get();
  };
  ZT_ASSIGN_OR_RETURN(g.dp, split(GridAxis::kDp));
  ZT_ASSIGN_OR_RETURN(g.pp, split(GridAxis::kPp));
  ZT_ASSIGN_OR_RETURN(g.tp, split(GridAxis::kTp));
  if (grid.ep() > 1) {
    ZT_ASSIGN_OR_RETURN(g.ep, split(GridAxis::kEp));
    ZT_ASSIGN_OR_RETURN(g.edp, split(GridAxis::kEdp));
  }
  if (grid.sp() > 1) {
    ZT_ASSIGN_OR_RETURN(g.sp, split(GridAxis::kSp));
  }
  if (grid.hpz() > 1) {
    ZT_ASSIGN_OR_RETURN(g.hpz, split(GridAxis::kHpz));
  }
  if (grid.pp() > 1) {  // every rank takes part in the split; middle stages get a group of one
    const std::vector<int> tied = tied_members(grid, rank);
    const int color = tied.empty() ? grid.world_size() + rank : tied.front();
    ZT_ASSIGN_OR_RETURN(auto group, world.split(color, tied.empty() ? 0 : (rank == tied.front() ? 0 : 1)));
    g.owned.push_back(std::move(group));
    if (!tied.empty()) g.tied = g.owned.back().get();
  }
  return g;
}

ParallelGroups make_thread_groups(ThreadWorld& world, const RankGrid& grid, int rank) {
  ParallelGroups g;
  g.owned.push_back(world.group(rank));
  g.world = g.owned.back().get();
  auto sub = [&](const std::vector<int>& members) {
    g.owned.push_back(world.subgroup(members, rank));
    return g.owned.back().get();
  };
  g.dp = sub(grid.group_of(rank, GridAxis::kDp));
  g.pp = sub(grid.group_of(rank, GridAxis::kPp));
  g.tp = sub(grid.group_of(rank, GridAxis::kTp));
  if (grid.ep() > 1) {
    g.ep = sub(grid.group_of(rank, GridAxis::kEp));
    g.edp = sub(grid.group_of(rank, GridAxis::kEdp));
  }
  if (grid.sp() > 1) g.sp = sub(grid.group_of(rank, GridAxis::kSp));
  if (grid.hpz() > 1) g.hpz = sub(grid.group_of(rank, GridAxis::kHpz));
  const std::vector<int> tied = tied_members(grid, rank);
  if (!tied.empty()) g.tied = sub(tied);
  return g;
}

}  // namespace zt
