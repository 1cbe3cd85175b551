// RankGrid: the data x pipeline x tensor parallel layout of a job as pure rank maths
// (Megatron's RankGenerator idea, no MPI needed), and ParallelGroups: the communicators
// for it, created once and passed explicitly to every component (no globals).
//
// Order "tp-dp-pp": tensor-parallel ranks vary fastest, then data-parallel, then pipeline:
//   rank = tp_rank + tp * (dp_rank + dp * pp_rank)
// Worked example, 16 ranks as tp=2, dp=2, pp=4 (rank: (tp, dp, pp)):
//   tp groups (same dp, pp): [0 1] [2 3] [4 5] ... [14 15]
//   dp groups (same tp, pp): [0 2] [1 3] [4 6] [5 7] ... [13 15]
//   pp groups (same tp, dp): [0 4 8 12] [1 5 9 13] [2 6 10 14] [3 7 11 15]
// Expert parallelism (MoE, issue 30) splits each dp group further, as DeepSpeed does: an
// expert-parallel group is ep consecutive dp ranks (dp // ep), and the expert-data-parallel
// group the dp ranks holding the same experts (dp % ep). dp=4, ep=2 (tp = pp = 1):
//   ep groups [0 1] [2 3]; expert-data-parallel groups [0 2] [1 3]
// Sequence parallelism (Ulysses, issue 31) splits the dp groups alike: a sequence-parallel
// group is sp consecutive dp ranks that read the same sequences, each holding 1/sp of every
// one's tokens. The dp group stays DeepSpeed's sequence-data-parallel group: gradients
// reduce and ZeRO partitions over all dp x sp ranks. Data parallelism proper (which
// sequences a rank reads) has dp / sp ranks: data_rank = dp coordinate / sp.
// ZeRO++'s hpZ (zero_hpz_partition_size) groups hpz consecutive dp ranks, DeepSpeed's
// zero_param_intra_parallel group: ZeRO-3's backward gathers parameters within it.
// Thread-safety: RankGrid is an immutable value.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

struct GridCoord {
  int tp = 0;
  int dp = 0;
  int pp = 0;
  bool operator==(const GridCoord& o) const { return tp == o.tp && dp == o.dp && pp == o.pp; }
};

enum class GridAxis { kTp, kDp, kPp, kEp, kEdp, kSp, kHpz };

class RankGrid {
 public:
  // InvalidArgument unless every degree is >= 1, tp * dp * pp == world_size, ep, sp and
  // hpz divide dp, and ep and sp are not both above 1 (nor ep and hpz).
  static StatusOr<RankGrid> create(int world_size, int tp, int dp, int pp, int ep = 1, int sp = 1, int hpz = 1);

  int world_size() const { return tp_ * dp_ * pp_; }
  int tp() const { return tp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int ep() const { return ep_; }
  int sp() const { return sp_; }
  int hpz() const { return hpz_; }
  // The ranks that read different sequences: dp / sp of them; rank's place among them.
  int data_parallel() const { return dp_ / sp_; }
  int data_rank(int rank) const { return coord(rank).dp / sp_; }
  int degree(GridAxis axis) const;

  GridCoord coord(int rank) const;
  int rank(const GridCoord& c) const;
  // The ranks that share every coordinate of `rank` except `axis`, in axis order.
  std::vector<int> group_of(int rank, GridAxis axis) const;
  // Every group along `axis` (each a list of ranks), ordered by their first rank.
  std::vector<std::vector<int>> groups(GridAxis axis) const;
  // The color that identifies rank's group along axis (for MPI_Comm_split).
  int group_color(int rank, GridAxis axis) const;

 private:
  RankGrid(int tp, int dp, int pp, int ep, int sp, int hpz) : tp_(tp), dp_(dp), pp_(pp), ep_(ep), sp_(sp), hpz_(hpz) {}
  int tp_, dp_, pp_, ep_, sp_, hpz_;
};

// The communicators of one rank: the world and its group along each axis, plus the
// pipeline's tied-weight group (its first and last stage: they both hold wte). A null
// group means "this rank alone" along that axis.
struct ParallelGroups {
  ProcessGroup* world = nullptr;
  ProcessGroup* dp = nullptr;
  ProcessGroup* pp = nullptr;
  ProcessGroup* tp = nullptr;
  ProcessGroup* tied = nullptr;  // first and last pipeline stage with this rank's (dp, tp); null unless pp > 1 and at an end
  ProcessGroup* ep = nullptr;    // expert parallelism: this rank's ep and expert-data-parallel groups (null: ep = 1)
  ProcessGroup* edp = nullptr;
  ProcessGroup* sp = nullptr;    // sequence parallelism: this rank's sp group (null: sp = 1)
  ProcessGroup* hpz = nullptr;   // ZeRO++ hpZ: this rank's secondary-partition group (null: hpz = 1)
  std::vector<std::unique_ptr<ProcessGroup>> owned;  // groups created for this bundle
};

}  // namespace zt
