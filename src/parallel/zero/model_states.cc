// ModelStates: allocation by stage and offload, the layer-parameter protocol, the
// chunked update and the end-of-step exchange.
#include "parallel/zero/model_states.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "comm/element_gather.h"
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

ElementRange ModelStates::owned_range(const Partition& partition, int rank, ZeroStage stage) {
  return shards_optimizer(stage) ? partition.shard(rank) : ElementRange{0, partition.numel()};
}

ModelStates::ModelStates(const ParamTable& table, const Partition& partition, ProcessGroup* dp,
                         const ModelStatesOptions& o)
    : table_(table),
      partition_(partition),
      dp_(dp),
      options_(o),
      shard_(partition.shard(dp->rank())),
      owned_(owned_range(partition, dp->rank(), o.stage)),
      compute_(backend_or_cpu(o.backend).compute_dtype()),
      host_update_(updates_on_host(backend_or_cpu(o.backend), o.offload)),
      compute_host_(params_on_host(backend_or_cpu(o.backend), o.offload)) {}

StatusOr<std::unique_ptr<ModelStates>> ModelStates::create(const ParamTable& table, const Partition& partition,
                                                           ProcessGroup* dp, int n_layer, const ModelStatesOptions& o) {
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<ModelStates> s, create_local(table, partition, dp, n_layer, o));
  ZT_RETURN_IF_ERROR(s->publish());
  return s;
}

StatusOr<std::unique_ptr<ModelStates>> ModelStates::create_local(const ParamTable& table, const Partition& partition,
                                                                 ProcessGroup* dp, int n_layer,
                                                                 const ModelStatesOptions& o) {
  ZT_RETURN_IF_ERROR(validate_offload(o.stage, o.offload));
  const Backend& b = backend_or_cpu(o.backend);
  if (params_on_host(b, o.offload) && !updates_on_host(b, o.offload)) {
    return Status::InvalidArgument("/zero_optimization/offload_param/device: \"cpu\" on the " + b.describe() +
                                   " backend needs offload_optimizer.device \"cpu\" or \"nvme\" too: the host's "
                                   "update writes the parameter shard in host memory");
  }
  std::unique_ptr<ModelStates> s(new ModelStates(table, partition, dp, o));
  dp->set_memory_domain(s->backend().memory_domain());  // the group moves these arenas (comm/memory_domain.h)
  ZT_RETURN_IF_ERROR(s->allocate(n_layer));
  return s;
}

Status ModelStates::publish() {
  if (fetcher_) return fetcher_->refresh_persistent();
  // A compute copy written from a master (mixed precision; offload_optimizer "cpu" on a
  // device) holds only the owned range until gathered.
  return master_ >= 0 && shards_optimizer(options_.stage) ? gather_compute() : Status::OK();
}

Status ModelStates::allocate(int n_layer) {
  const Backend& b = backend();
  const ZeroStage stage = options_.stage;
  if (mixed() && table_.numel() % 2 != 0) {
    return Status::InvalidArgument("mixed precision needs an even number of parameters (they move as pairs of 16-bit "
                                   "values); this model has " + std::to_string(table_.numel()));
  }
  if (!shards_parameters(stage)) {
    ZT_ASSIGN_OR_RETURN(params_, b.allocate(table_.numel(), compute_, mixed() ? "the 16-bit compute parameters" : "the parameters"));
  } else if (!options_.offload.swaps_params()) {
    ZT_ASSIGN_OR_RETURN(param_shard_, compute_backend().allocate(shard_.size(), compute_, mixed() ? "the 16-bit parameter shard" : "the parameter shard"));
  }
  if (shards_gradients(stage)) {
    ZT_ASSIGN_OR_RETURN(grad_shard_, b.allocate(shard_.size(), DType::kF32, "the gradient shard"));
  } else {
    ZT_ASSIGN_OR_RETURN(grads_, b.allocate(table_.numel(), DType::kF32, "the gradients"));
  }
  ZT_RETURN_IF_ERROR(make_store());
  const uint64_t seed = options_.seed;
  if (master_ < 0 && !params_.empty()) init_params_into(backend(), table_, {0, table_.numel()}, params_.data(), seed);
  if (master_ < 0 && !param_shard_.empty()) init_params_into(backend(), table_, shard_, param_shard_.data(), seed);
  // Every array of the store from the seed (the optimizer's state from zero), and the
  // compute copy from the master; the chunks come in order, so each tensor is drawn once.
  ParamInitializer init(table_, seed);
  ZT_RETURN_IF_ERROR(store_->stream(flags(false), flags(true), [&](size_t begin, size_t n, void* const* arrays) {
    for (size_t a = 0; a < store_->specs().size(); ++a) {
      if (static_cast<int>(a) != master_ && static_cast<int>(a) != param16_) {
        states_backend().zero(arrays[a], n * sizeof(float));
      }
    }
    float* p = fp32_params(begin, arrays);
    if (master_ >= 0) init.into(states_backend(), {owned_.begin + begin, owned_.begin + begin + n}, p);
    write_compute(begin, n, p, arrays);
    return Status::OK();
  }));
  return make_fetcher(n_layer);
}

float* ModelStates::fp32_params(size_t begin, void* const* arrays) {
  if (master_ >= 0) return static_cast<float*>(arrays[master_]);
  return params_.empty() ? param_shard_.data() + begin : params_.data() + owned_.begin + begin;
}

void* ModelStates::compute_at(size_t begin, void* const* arrays) {
  const size_t eb = dtype_size(compute_);
  if (param16_ >= 0) return arrays[param16_];
  if (master_ >= 0 && options_.offload.swaps_params() && !mixed()) return arrays[master_];  // fp32: the shard is the master
  return !param_shard_.empty() ? param_shard_.as<unsigned char>() + begin * eb
                               : params_.as<unsigned char>() + (owned_.begin + begin) * eb;
}

void ModelStates::write_compute(size_t begin, size_t n, const float* params, void* const* arrays) {
  if (host_update_) {
    upload_compute(begin, n, params, arrays);
  } else if (mixed()) {
    auto* dst = static_cast<half_t*>(compute_at(begin, arrays));
    backend().half_ops()->from_f32(dst, params, static_cast<int64_t>(n));
    write_cache(begin, n, dst);
  } else {
    write_cache(begin, n, params);
  }
}

void ModelStates::write_cache(size_t begin, size_t n, const void* compute) {
  if (begin < param_cache_.size()) {  // parameter offload: the in-memory prefix, written through
    const size_t eb = dtype_size(compute_);
    const size_t m = std::min(n, param_cache_.size() - begin);
    compute_backend().copy(param_cache_.as<unsigned char>() + begin * eb, compute, m * eb);
  }
}

Status ModelStates::gather_compute() {
  unsigned char* compute = params_.as<unsigned char>();
  const size_t eb = dtype_size(compute_);
  std::vector<WorkHandle> works;
  const size_t chunk = std::max<size_t>(2, options_.allgather_bucket_elems / 2 * 2);  // even: 16-bit moves as words
  for (size_t a = 0; a < params_.size(); a += chunk) {
    const ElementRange r{a, std::min(params_.size(), a + chunk)};
    works.push_back(all_gather_elements(dp_, compute + a * eb, partition_.counts(r), eb));
  }
  for (WorkHandle& w : works) ZT_RETURN_IF_ERROR(w->wait());
  return Status::OK();
}

float* ModelStates::owned_params() {
  if (master_ >= 0) return nullptr;
  return params_.empty() ? param_shard_.data() : params_.data() + owned_.begin;
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

StatusOr<void*> ModelStates::layer_params(int layer) {
  if (!fetcher_) return params_.as<unsigned char>() + table_.layer_range(layer).begin * dtype_size(compute_);
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

Status ModelStates::update(Optimizer& optimizer, const StepHyper& hyper) {
  if (swapped_shard_) swapped_shard_->invalidate();  // the step rewrites the shard's file
  host_times_ = {};
  optimizer.begin_step(hyper);
  std::vector<bool> read = flags(true);
  if (param16_ >= 0) read[static_cast<size_t>(param16_)] = false;  // written from the master
  const size_t n_states = options_.optimizer_state.size();
  std::vector<float*> states(n_states);
  return store_->stream(read, flags(true), [&](size_t begin, size_t n, void* const* arrays) {
    float* p = fp32_params(begin, arrays);
    for (size_t i = 0; i < n_states; ++i) states[i] = static_cast<float*>(arrays[static_cast<size_t>(first_state_) + i]);
    if (host_update_) return update_on_host(optimizer, begin, n, p, arrays, states.data());
    if (!mixed()) {
      optimizer.update(begin, n, p, owned_grads() + begin, states.data());
      ZT_RETURN_IF_ERROR(optimizer.last_error());
      write_cache(begin, n, p);
      return Status::OK();
    }
    auto* copy = static_cast<half_t*>(compute_at(begin, arrays));  // written in the update's pass (update_copy)
    optimizer.update_copy(begin, n, p, owned_grads() + begin, states.data(), copy, *backend().half_ops());
    ZT_RETURN_IF_ERROR(optimizer.last_error());
    write_cache(begin, n, copy);
    return Status::OK();
  });
}

Status ModelStates::finish_step() {
  if (fetcher_) return fetcher_->refresh_persistent();
  return shards_optimizer(options_.stage) ? gather_compute() : Status::OK();
}

Status ModelStates::finish_load() {
  if (swapped_shard_) swapped_shard_->invalidate();
  if (master_ >= 0) {  // the compute copy (and an offloaded shard's in-memory prefix) from the loaded master
    std::vector<bool> read = flags(false), write = flags(false);
    read[static_cast<size_t>(master_)] = true;
    if (param16_ >= 0) write[static_cast<size_t>(param16_)] = true;
    ZT_RETURN_IF_ERROR(store_->stream(read, write, [&](size_t begin, size_t n, void* const* arrays) {
      write_compute(begin, n, fp32_params(begin, arrays), arrays);
      return Status::OK();
    }));
  }
  return publish();
}

StatusOr<std::vector<OwnedArray>> ModelStates::open_arrays() {
  ZT_ASSIGN_OR_RETURN(std::vector<void*> p, store_->open());
  std::vector<OwnedArray> out;
  if (master_ >= 0) {
    out.push_back({"param", static_cast<float*>(p[static_cast<size_t>(master_)]), owned_, host_update_});
  } else if (!params_.empty()) {
    out.push_back({"param", params_.data(), {0, params_.size()}});
  } else {
    out.push_back({"param", param_shard_.data(), shard_});
  }
  for (size_t i = 0; i < options_.optimizer_state.size(); ++i) {
    out.push_back({options_.optimizer_state[i], static_cast<float*>(p[static_cast<size_t>(first_state_) + i]), owned_,
                   host_update_});
  }
  return out;
}

Status ModelStates::close_arrays(bool written) { return store_->close(written); }

Status ModelStates::gather_params(float* out) {
  ZT_ASSIGN_OR_RETURN(const std::vector<OwnedArray> arrays, open_arrays());
  const OwnedArray& p = arrays[0];
  (p.host ? states_backend() : backend()).copy_to_host(out + p.range.begin, p.data, p.range.size() * sizeof(float));
  ZT_RETURN_IF_ERROR(close_arrays(false));
  if (p.range.size() == partition_.numel()) return Status::OK();
  return dp_->all_gather(out, partition_.counts({0, partition_.numel()}))->wait();
}

}  // namespace zt
