// ModelStates: where the store's arrays live (resident, or swapped under nvme_path), the
// parameter-offload fetcher, and the memory and disk figures; see model_states.h.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>

#include "parallel/zero/model_states.h"

#include "core/timer.h"

namespace zt {

namespace {

Status check_dir(const std::string& path, const std::string& key) {
  std::error_code ec;
  if (path.empty()) return Status::InvalidArgument(key + ": device \"nvme\" needs an nvme_path (an existing directory)");
  if (!std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(key + ": " + path + " is not an existing directory");
  }
  if (::access(path.c_str(), W_OK) != 0) return Status::InvalidArgument(key + ": " + path + " is not writable");
  return Status::OK();
}

}  // namespace

Status ModelStates::validate_offload(ZeroStage stage, const OffloadOptions& o) {
  const std::string zo = "/zero_optimization/";
  if (o.swaps_params() && stage != ZeroStage::kParameters) {
    return Status::InvalidArgument(zo + "offload_param: parameter offload needs ZeRO stage 3, as in DeepSpeed (this run "
                                   "has stage " + std::to_string(static_cast<int>(stage)) + ")");
  }
  if (o.swaps_params() && !o.swaps_optimizer()) {
    return Status::InvalidArgument(zo + "offload_param/device: \"nvme\" needs offload_optimizer.device \"nvme\" too: "
                                   "zerotrain swaps the parameter shard in the optimizer's chunks");
  }
  if (o.swaps_optimizer()) {
    ZT_RETURN_IF_ERROR(check_dir(o.optimizer_path, zo + "offload_optimizer/nvme_path"));
    ZT_RETURN_IF_ERROR(o.aio.validate());
    if (o.sub_group_size == 0) return Status::InvalidArgument(zo + "sub_group_size: must be positive");
  }
  if (o.swaps_params()) {
    ZT_RETURN_IF_ERROR(check_dir(o.param_path, zo + "offload_param/nvme_path"));
    if (o.param_buffer_count < 2) {
      return Status::InvalidArgument(zo + "offload_param/buffer_count: must be at least 2 (one part in use, one read "
                                     "ahead), got " + std::to_string(o.param_buffer_count));
    }
  }
  return Status::OK();
}

Status ModelStates::make_store() {
  const OffloadOptions& off = options_.offload;
  std::vector<StateArraySpec> specs;
  if (off.swaps_params() && !mixed()) {
    specs.push_back({"param", DType::kF32, off.param_path});  // fp32: the parameters are the master
  } else if (mixed() || host_update_) {  // on a device, the host's update keeps an fp32 master on the host
    specs.push_back({"master", DType::kF32, ""});
  }
  master_ = specs.empty() ? -1 : 0;
  first_state_ = static_cast<int>(specs.size());
  for (const std::string& name : options_.optimizer_state) specs.push_back({name, DType::kF32, ""});
  if (mixed() && off.swaps_params()) {
    param16_ = static_cast<int>(specs.size());
    specs.push_back({"param16", compute_, off.param_path});
  }
  if (off.swaps_params()) {
    const size_t cache = std::min(off.max_in_cpu, shard_.size());
    ZT_ASSIGN_OR_RETURN(param_cache_, compute_backend().allocate(cache, compute_, "the parameters kept in memory (max_in_cpu)"));
  }
  if (host_update_) {
    stage_piece_ = host_stage_elems(off, owned_.size());
    stage_slots_ = host_stage_slots(off, owned_.size());
    const size_t elems = stage_piece_ * stage_slots_;
    ZT_ASSIGN_OR_RETURN(stage_grads_, staging_backend().allocate(elems, DType::kF32, "the host staging of gradients"));
    if (!compute_host_) {  // fp32 too: an upload from the pageable master would block the host's update
      ZT_ASSIGN_OR_RETURN(stage_copy_, staging_backend().allocate(elems, compute_, "the host staging of parameters"));
    }
  }
  if (!off.swaps_optimizer()) {
    ZT_ASSIGN_OR_RETURN(store_, make_resident_store(std::move(specs), owned_.size(), states_backend()));
    return Status::OK();
  }
  ZT_ASSIGN_OR_RETURN(io_, IoEngine::create(off.aio));
  SwapPlacement where;
  where.io = io_.get();
  where.dir = off.optimizer_path;
  where.prefix = "zerotrain." + std::to_string(::getpid()) + ".rank" + std::to_string(off.world_rank);
  where.chunk_elems = off.sub_group_size;
  where.pin = off.pin_memory;
  ZT_ASSIGN_OR_RETURN(store_, make_swapped_store(std::move(specs), owned_.size(), where));
  return Status::OK();
}

size_t ModelStates::host_stage_elems(const OffloadOptions& o, size_t owned) {
  constexpr size_t kMaxPiece = size_t{1} << 26;  // DeepSpeed's default sub_group_size (1e9) is capped
  const size_t sub = o.sub_group_size > 0 ? std::min(o.sub_group_size, kMaxPiece) : kMaxPiece;
  return std::max<size_t>(1, std::min(owned, sub));
}

size_t ModelStates::host_stage_slots(const OffloadOptions& o, size_t owned) {
  return o.swaps_optimizer() || owned <= host_stage_elems(o, owned) ? 1 : 2;
}

size_t ModelStates::host_stage_bytes(const Backend& backend, const OffloadOptions& o, size_t owned) {
  if (!updates_on_host(backend, o)) return 0;
  const size_t piece = host_stage_elems(o, owned) * host_stage_slots(o, owned);
  const DType compute = backend.compute_dtype();
  const bool copy = !params_on_host(backend, o);  // the compute copy's staging (fp32 too)
  return piece * sizeof(float) + (copy ? piece * dtype_size(compute) : 0);
}

const Backend& ModelStates::states_backend() const {
  return host_update_ ? plain_cpu_backend(compute_) : backend();
}

// One store chunk's update on the host, in staging pieces, pipelined over the slots: piece
// k+1's gradients come down and piece k-1's compute copy goes up while the host updates
// piece k (with one slot, one after the other). The same arithmetic on the same values as
// the update in the backend's memory; only when the bytes move differs.
Status ModelStates::update_on_host(Optimizer& optimizer, size_t begin, size_t n, float* p, void* const* arrays,
                                   float* const* states) {
  const size_t piece = stage_piece_, slots = stage_slots_, count = (n + piece - 1) / piece;
  if (count == 0) return Status::OK();
  std::vector<CopyHandle> down(count), up(count);
  auto start_down = [&](size_t k) {  // returns at once into pinned memory; into pageable, after the copy
    const size_t off = k * piece;
    Stopwatch issue;
    down[k] = backend().start_copy_to_host(stage_grads_.data() + (k % slots) * piece, owned_grads() + begin + off,
                                           std::min(piece, n - off) * sizeof(float));
    host_times_.copy_wait_s += issue.seconds();
  };
  Status s = Status::OK();
  start_down(0);
  for (size_t k = 0; k < count && s.ok(); ++k) {
    if (slots > 1 && k + 1 < count) start_down(k + 1);  // into the slot piece k-1 used
    Stopwatch blocked;
    wait_copy(down[k]);
    if (k >= slots) wait_copy(up[k - slots]);  // its staging slot is this piece's
    host_times_.copy_wait_s += blocked.seconds();
    Stopwatch work;
    StatusOr<CopyHandle> placed = update_piece(optimizer, begin, k, std::min(piece, n - k * piece), p, arrays, states);
    host_times_.update_s += work.seconds();
    s = placed.status();
    if (s.ok()) up[k] = std::move(placed).value();
    if (s.ok() && slots == 1 && k + 1 < count) start_down(k + 1);
  }
  Stopwatch blocked;
  for (CopyHandle& h : down) wait_copy(h);
  for (CopyHandle& h : up) wait_copy(h);
  host_times_.copy_wait_s += blocked.seconds();
  return s;
}

StatusOr<CopyHandle> ModelStates::update_piece(Optimizer& optimizer, size_t begin, size_t k, size_t m, float* p,
                                               void* const* arrays, float* const* states) {
  const size_t off = k * stage_piece_, slot = k % stage_slots_, eb = dtype_size(compute_);
  auto* compute = static_cast<unsigned char*>(compute_at(begin, arrays)) + off * eb;
  const float* grads = stage_grads_.data() + slot * stage_piece_;
  std::vector<float*> st(options_.optimizer_state.size());
  for (size_t i = 0; i < st.size(); ++i) st[i] = states[i] + off;
  const void* up = p + off;
  if (mixed()) {
    auto* into = compute_host_ ? reinterpret_cast<half_t*>(compute) : stage_copy_.as<half_t>() + slot * stage_piece_;
    optimizer.update_copy(begin + off, m, p + off, grads, st.data(), into, *states_backend().half_ops());
    up = into;
  } else {
    optimizer.update(begin + off, m, p + off, grads, st.data());
    if (!compute_host_) {  // into the staging slot, from which the copy up runs asynchronously
      float* into = stage_copy_.as<float>() + slot * stage_piece_;
      std::memcpy(into, p + off, m * sizeof(float));
      up = into;
    }
  }
  ZT_RETURN_IF_ERROR(optimizer.last_error());
  return place_compute(begin + off, m, compute, up);
}

// The compute copy of host params (a host master): cast on the host, then uploaded, a
// piece at a time (after a load; not the step's path).
void ModelStates::upload_compute(size_t begin, size_t n, const float* params, void* const* arrays) {
  const size_t piece = stage_piece_, eb = dtype_size(compute_);
  auto* compute = static_cast<unsigned char*>(compute_at(begin, arrays));
  for (size_t off = 0; off < n; off += piece) {
    const size_t m = std::min(piece, n - off);
    const void* up = params + off;
    if (mixed()) {
      auto* into = compute_host_ ? reinterpret_cast<half_t*>(compute + off * eb) : stage_copy_.as<half_t>();
      states_backend().half_ops()->from_f32(into, params + off, static_cast<int64_t>(m));
      up = into;
    }
    CopyHandle h = place_compute(begin + off, m, compute + off * eb, up);
    wait_copy(h);
  }
}

CopyHandle ModelStates::place_compute(size_t at, size_t m, void* dst, const void* src) {
  const size_t bytes = m * dtype_size(compute_);
  if (!compute_host_) return backend().start_copy_from_host(dst, src, bytes);
  if (dst != src) states_backend().copy(dst, src, bytes);
  write_cache(at, m, dst);
  return nullptr;
}

Status ModelStates::make_fetcher(int n_layer) {
  if (!shards_parameters(options_.stage)) return Status::OK();
  ParamFetcherOptions fo = options_.fetch;
  fo.backend = &backend();
  fo.dtype = compute_;
  fo.shard_on_host = compute_host_;
  if (!options_.offload.swaps_params()) {
    fetcher_ = std::make_unique<ParamFetcher>(table_, partition_, dp_, param_shard_.as<void>(), n_layer, fo);
    return Status::OK();
  }
  size_t max_part = 0;  // this rank's largest part of one layer
  for (int layer = kEmbeddingLayer; layer <= n_layer; ++layer) {
    const ElementRange r = table_.layer_range(layer);
    const size_t lo = std::max(r.begin, shard_.begin), hi = std::min(r.end, shard_.end);
    if (lo < hi) max_part = std::max(max_part, hi - lo);
  }
  if (max_part > options_.offload.param_buffer_size) {
    return Status::InvalidArgument("/zero_optimization/offload_param/buffer_size: " +
                                   std::to_string(options_.offload.param_buffer_size) +
                                   " elements is smaller than this rank's largest layer part (" +
                                   std::to_string(max_part) + " elements)");
  }
  const size_t array = static_cast<size_t>(mixed() ? param16_ : master_);
  ZT_ASSIGN_OR_RETURN(swapped_shard_, SwappedShard::create(store_->swap(), array, param_cache_.as<void>(), param_cache_.size(),
                                                           options_.offload.param_buffer_count, std::max<size_t>(max_part, 1),
                                                           options_.offload.pin_memory));
  fetcher_ = std::make_unique<ParamFetcher>(table_, partition_, dp_, swapped_shard_.get(), n_layer, fo);
  return Status::OK();
}

size_t ModelStates::master_bytes() const {
  return (mixed() || host_update_) && store_->swap() == nullptr ? owned_.size() * sizeof(float) : 0;
}

size_t ModelStates::param_bytes() const {
  return params_.bytes() + param_shard_.bytes() + param_cache_.bytes() + master_bytes();
}

size_t ModelStates::optimizer_bytes() const {
  return store_->swap() == nullptr ? options_.optimizer_state.size() * owned_.size() * sizeof(float) : 0;
}

size_t ModelStates::offload_buffer_bytes() const {
  const size_t staging = stage_grads_.bytes() + stage_copy_.bytes();
  if (store_->swap() == nullptr) return staging;
  return staging + store_->resident_bytes() + (swapped_shard_ ? swapped_shard_->buffer_bytes() : 0);
}

size_t ModelStates::host_bytes() const {
  if (backend().host()) return 0;
  return offload_buffer_bytes() + (host_update_ ? master_bytes() + optimizer_bytes() : 0) +
         (compute_host_ ? param_shard_.bytes() + param_cache_.bytes() : 0);
}

std::string ModelStates::offload_description() const {
  SwapArrays* swap = store_->swap();
  const OffloadOptions& off = options_.offload;
  std::string d;
  if (swap != nullptr) {
    std::string what = mixed() || host_update_ ? "fp32 master and optimizer state" : "optimizer state";
    if (off.swaps_params()) what += " and parameter shard";
    d = what + " on NVMe (" + off.optimizer_path + (off.swaps_params() && off.param_path != off.optimizer_path ? ", " + off.param_path : "") +
        "): " + std::to_string(swap->chunks()) + " chunk(s) of " + std::to_string(swap->chunk_elems()) +
        " elements, " + io_->mode() + (swap->direct() ? ", O_DIRECT" : ", buffered I/O (the file system refused O_DIRECT)");
    if (off.pin_memory && !swap->pinned()) d += ", buffers not pinned (mlock refused: raise ulimit -l)";
  } else if (host_update_) {
    d = "fp32 master and optimizer state in host memory (" + std::to_string((master_bytes() + optimizer_bytes()) >> 20) + " MiB)";
  }
  if (!host_update_) return d;
  d += "; updated by the host's threads, gradients down and the compute copy " +
       std::string(compute_host_ ? "written in host memory" : "up") + " in pieces of " + std::to_string(stage_piece_) +
       " elements" + (&staging_backend() != &states_backend() ? " through page-locked memory" : "");
  if (compute_host_ && swap == nullptr) {
    d += "; parameter shard in host memory (" + std::to_string(param_shard_.bytes() >> 20) +
         " MiB), each layer's part copied up before its gather";
  } else if (compute_host_) {
    d += "; each layer's part of the parameter shard copied up before its gather";
  }
  return d;
}

}  // namespace zt
