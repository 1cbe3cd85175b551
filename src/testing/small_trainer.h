// The small ZeRO trainer the in-process engine tests share (2 sequences of 8 tokens per
// micro-batch, lr 1e-2, 4000-element buckets so every stage cuts tensors, nothing
// persistent under ZeRO-3), and a run of it on thread-ranks with resume and save. Tests only.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/sharded_load.h"
#include "comm/thread_world.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "engine/trainer_checkpoint.h"
#include "testing/synthetic_data.h"

namespace zt::testing {

inline TrainerOptions small_trainer(const GptConfig& model, ZeroStage stage) {
  TrainerOptions o;
  o.model = model;
  o.micro_batch = 2;
  o.seq_len = 8;
  o.schedule.base_lr = 1e-2;
  o.zero.stage = stage;
  o.zero.reduce.bucket_elems = 4000;
  o.zero.allgather_bucket_elems = 4000;
  o.zero.fetch.prefetch_elems = 8000;
  o.zero.fetch.persistence_threshold = 0;
  return o;
}

struct RunOut {
  std::vector<double> losses;  // rank 0's, per step
  std::vector<int> seq_lens;   // the curriculum's sequence length per step
  std::vector<float> params;   // gathered after the last step
  Status status;
};

// Steps [from, to) of the synthetic data (vocabulary 61, 8 tokens, 2 sequences a
// micro-batch) on N thread-ranks with `accum` micro-batches each; loads `resume` first and
// saves to `save` after (either may be empty). ep > 1: expert parallelism over the N
// data-parallel ranks (params are then rank 0's experts and the rest).
inline RunOut train_ranks(const TrainerOptions& o, int N, int accum, int from, int to, const std::string& resume = "",
                          const std::string& save = "", int ep = 1) {
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, 1, N, 1, ep).value();
  RunOut out;
  out.status = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions mine = o;
    ZT_ASSIGN_OR_RETURN(mine.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(mine, &groups));
    if (!resume.empty()) {
      ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(resume));
      ZT_RETURN_IF_ERROR(load_trainer(*t, ckpt, false).status());
    }
    for (int step = from; step < to; ++step) {
      const SyntheticStep data = synthetic_step(61, 8, 2, accum, rank, N, step, 3);
      ZT_ASSIGN_OR_RETURN(StepStats st, t->step(data.micro_batches()));
      if (rank == 0) {
        out.losses.push_back(st.loss);
        out.seq_lens.push_back(t->last_seq_len());
      }
    }
    std::vector<float> p(t->param_table().numel());
    ZT_RETURN_IF_ERROR(t->gather_params(p.data()));
    if (rank == 0) out.params = p;
    return save.empty() ? Status::OK() : save_trainer(*t, {save, "", 0, Json::object(), nullptr});
  });
  return out;
}

}  // namespace zt::testing
