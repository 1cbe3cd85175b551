// ModelStates: allocation by stage, the layer-parameter protocol, and the end-of-step
// exchange.
#include "parallel/zero/model_states.h"

#include <algorithm>
#include <string>

#include "nn/gpt_params.h"
#include "comm/element_gather.h"

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
    : partition_(partition),
      dp_(dp),
      options_(o),
      shard_(partition.shard(dp->rank())),
      compute_(backend_or_cpu(o.backend).compute_dtype()) {
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
  if (compute_ != DType::kF32) {
    if (table.numel() % 2 != 0) {
      return Status::InvalidArgument("mixed precision needs an even number of parameters (they move as pairs of 16-bit "
                                     "values); this model has " + std::to_string(table.numel()));
    }
    ZT_ASSIGN_OR_RETURN(master_, b.allocate(owned_.size(), DType::kF32, "the fp32 master weights"));
    init_params_range(table, owned_, master_.data(), options_.seed);
    if (shards_parameters(stage)) {
      ZT_ASSIGN_OR_RETURN(param_shard_, b.allocate(shard_.size(), compute_, "the 16-bit parameter shard"));
    } else {
      ZT_ASSIGN_OR_RETURN(params_, b.allocate(table.numel(), compute_, "the 16-bit compute parameters"));
    }
  } else if (shards_parameters(stage)) {
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
    fo.dtype = compute_;
    fetcher_ = std::make_unique<ParamFetcher>(table, partition_, dp_, param_shard_.as<void>(), n_layer, fo);
    if (!mixed()) ZT_RETURN_IF_ERROR(fetcher_->refresh_persistent());
  }
  return mixed() ? publish_master() : Status::OK();
}

Status ModelStates::publish_master() {
  const ActivationOps<half_t>* h = backend().half_ops();
  ZT_CHECK(h != nullptr, "mixed-precision model states need a backend with 16-bit kernels");
  if (fetcher_) {  // stage 3: the 16-bit shard, then the persistent layers
    h->from_f32(param_shard_.as<half_t>(), master_.data(), static_cast<int64_t>(owned_.size()));
    return fetcher_->refresh_persistent();
  }
  half_t* compute = params_.as<half_t>();
  h->from_f32(compute + owned_.begin, master_.data(), static_cast<int64_t>(owned_.size()));
  if (!shards_optimizer(options_.stage)) return Status::OK();
  // Stages 1-2: all-gather the compute copy in buckets (even-length, as 32-bit words).
  std::vector<WorkHandle> works;
  const size_t chunk = std::max<size_t>(2, options_.allgather_bucket_elems / 2 * 2);
  for (size_t a = 0; a < params_.size(); a += chunk) {
    const ElementRange r{a, std::min(params_.size(), a + chunk)};
    works.push_back(all_gather_elements(dp_, compute + a, partition_.counts(r), dtype_size(compute_)));
  }
  for (WorkHandle& w : works) ZT_RETURN_IF_ERROR(w->wait());
  return Status::OK();
}

float* ModelStates::owned_params() {
  if (mixed()) return master_.data();
  return shards_parameters(options_.stage) ? param_shard_.data() : params_.data() + owned_.begin;
}

const float* ModelStates::owned_grads() const {
  return shards_gradients(options_.stage) ? grad_shard_.data() : grads_.data() + owned_.begin;
}

void ModelStates::bind(GptModel* model) {
  if (!fetcher_) model->bind(params_.as<void>(), full_grads());
}

void ModelStates::begin_micro(bool with_backward) {
  if (fetcher_) fetcher_->begin_micro(with_backward);
}

StatusOr<void*> ModelStates::layer_params(int layer, const ParamTable& table) {
  if (!fetcher_) return params_.as<unsigned char>() + table.layer_range(layer).begin * dtype_size(compute_);
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
  if (mixed()) return publish_master();
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

Status ModelStates::finish_load() {
  if (mixed()) return publish_master();
  return fetcher_ ? fetcher_->refresh_persistent() : Status::OK();
}

Status ModelStates::gather_params(float* out) {
  if (mixed()) {
    backend().copy(out + owned_.begin, master_.data(), master_.bytes());
    if (!shards_optimizer(options_.stage)) return Status::OK();
    return dp_->all_gather(out, partition_.counts({0, partition_.numel()}))->wait();
  }
  if (!params_.empty()) {
    backend().copy(out, params_.data(), params_.bytes());
    return Status::OK();
  }
  backend().copy(out + shard_.begin, param_shard_.data(), param_shard_.bytes());
  return dp_->all_gather(out, partition_.counts({0, partition_.numel()}))->wait();
}

OwnedArray ModelStates::param_array() {
  if (mixed()) return {"param", master_.data(), owned_};
  if (shards_parameters(options_.stage)) return {"param", param_shard_.data(), shard_};
  return {"param", params_.data(), {0, params_.size()}};
}

}  // namespace zt
