// ModelStates: allocation by stage, the layer-parameter protocol, and the end-of-step
// exchange.
#include "parallel/zero/model_states.h"

#include <algorithm>
#include <string>

#include "nn/gpt_params.h"

namespace zt {

Status ModelStates::validate(ZeroStage stage, int pipeline_stages) {
  if (pipeline_stages > 1 && shards_gradients(stage)) {
    return Status::Unimplemented("/zero_optimization/stage: ZeRO stage " + std::to_string(static_cast<int>(stage)) +
                                 " with pipeline parallelism: gradients and parameters would be re-partitioned for "
                                 "every micro-batch of the schedule (DeepSpeed refuses it too); use stage 0 or 1");
  }
  return Status::OK();
}

ModelStates::ModelStates(const Partition& partition, ProcessGroup* dp, const ModelStatesOptions& o)
    : partition_(partition), dp_(dp), options_(o), shard_(partition.shard(dp->rank())) {
  owned_ = shards_optimizer(o.stage) ? shard_ : ElementRange{0, partition.numel()};
}

StatusOr<std::unique_ptr<ModelStates>> ModelStates::create(const ParamTable& table, const Partition& partition,
                                                           ProcessGroup* dp, int n_layer, const ModelStatesOptions& o) {
  std::unique_ptr<ModelStates> s(new ModelStates(partition, dp, o));
  ZT_RETURN_IF_ERROR(s->allocate(table, n_layer));
  return s;
}

Status ModelStates::allocate(const ParamTable& table, int n_layer) {
  const Backend& b = backend();
  const ZeroStage stage = options_.stage;
  if (shards_parameters(stage)) {
    ZT_ASSIGN_OR_RETURN(param_shard_, b.allocate(shard_.size(), DType::kF32, "the parameter shard"));
    init_params_range(table, shard_, param_shard_.data(), options_.seed);
  } else {
    ZT_ASSIGN_OR_RETURN(params_, b.allocate(table.numel(), DType::kF32, "the parameters"));
    init_params(table, params_.data(), options_.seed);
  }
  if (shards_gradients(stage)) {
    ZT_ASSIGN_OR_RETURN(grad_shard_, b.allocate(shard_.size(), DType::kF32, "the gradient shard"));
  } else {
    ZT_ASSIGN_OR_RETURN(grads_, b.allocate(table.numel(), DType::kF32, "the gradients"));
  }
  if (shards_parameters(stage)) {
    ParamFetcherOptions fo = options_.fetch;
    fo.backend = &b;
    fetcher_ = std::make_unique<ParamFetcher>(table, partition_, dp_, param_shard_.data(), n_layer, fo);
    ZT_RETURN_IF_ERROR(fetcher_->refresh_persistent());
  }
  return Status::OK();
}

float* ModelStates::owned_params() {
  return shards_parameters(options_.stage) ? param_shard_.data() : params_.data() + owned_.begin;
}

const float* ModelStates::owned_grads() const {
  return shards_gradients(options_.stage) ? grad_shard_.data() : grads_.data() + owned_.begin;
}

void ModelStates::bind(GptModel* model) {
  if (!fetcher_) model->bind(params_.data(), full_grads());
}

void ModelStates::begin_micro(bool with_backward) {
  if (fetcher_) fetcher_->begin_micro(with_backward);
}

StatusOr<float*> ModelStates::layer_params(int layer, const ParamTable& table) {
  if (!fetcher_) return params_.data() + table.layer_range(layer).begin;
  if (fetcher_->persistent(layer)) return fetcher_->persistent_params(layer);
  return fetcher_->acquire(layer);
}

void ModelStates::release(int layer) {
  if (fetcher_ && !fetcher_->persistent(layer)) fetcher_->release(layer);
}

void ModelStates::zero_grads() {
  grads_.zero();
  grad_shard_.zero();
}

Status ModelStates::finish_step() {
  if (fetcher_) return fetcher_->refresh_persistent();
  if (!shards_optimizer(options_.stage)) return Status::OK();
  // Stages 1-2: every rank updated its shard; all-gather the parameters in buckets.
  std::vector<WorkHandle> works;
  const size_t chunk = std::max<size_t>(1, options_.allgather_bucket_elems);
  for (size_t a = 0; a < params_.size(); a += chunk) {
    const ElementRange r{a, std::min(params_.size(), a + chunk)};
    works.push_back(dp_->all_gather(params_.data() + a, partition_.counts(r)));
  }
  for (WorkHandle& w : works) ZT_RETURN_IF_ERROR(w->wait());
  return Status::OK();
}

Status ModelStates::finish_load() { return fetcher_ ? fetcher_->refresh_persistent() : Status::OK(); }

Status ModelStates::gather_params(float* out) {
  if (!params_.empty()) {
    backend().copy(out, params_.data(), params_.bytes());
    return Status::OK();
  }
  backend().copy(out + shard_.begin, param_shard_.data(), param_shard_.bytes());
  return dp_->all_gather(out, partition_.counts({0, partition_.numel()}))->wait();
}

OwnedArray ModelStates::param_array() {
  if (shards_parameters(options_.stage)) return {"param", param_shard_.data(), shard_};
  return {"param", params_.data(), {0, params_.size()}};
}

}  // namespace zt
