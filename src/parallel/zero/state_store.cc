// The resident and swapped StateStores; see state_store.h.
#include "parallel/zero/state_store.h"

namespace zt {

int StateStore::index(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

class ResidentStore final : public StateStore {
 public:
  ResidentStore(std::vector<StateArraySpec> specs, size_t numel, std::vector<Arena> arrays)
      : StateStore(std::move(specs)), numel_(numel), arrays_(std::move(arrays)) {}

  Status stream(const std::vector<bool>&, const std::vector<bool>&, const ChunkFn& fn) override {
    if (numel_ == 0) return Status::OK();
    std::vector<void*> p = pointers();
    return fn(0, numel_, p.data());
  }
  StatusOr<std::vector<void*>> open() override { return pointers(); }
  Status close(bool) override { return Status::OK(); }
  size_t resident_bytes() const override {
    size_t n = 0;
    for (const Arena& a : arrays_) n += a.bytes();
    return n;
  }
  size_t disk_bytes() const override { return 0; }

 private:
  std::vector<void*> pointers() {
    std::vector<void*> p;
    for (Arena& a : arrays_) p.push_back(a.as<void>());
    return p;
  }
  size_t numel_;
  std::vector<Arena> arrays_;
};

class SwappedStore final : public StateStore {
 public:
  SwappedStore(std::vector<StateArraySpec> specs, std::unique_ptr<SwapArrays> swap)
      : StateStore(std::move(specs)), swap_(std::move(swap)) {}

  Status stream(const std::vector<bool>& read, const std::vector<bool>& write, const ChunkFn& fn) override {
    return swap_->stream(read, write, fn);
  }
  StatusOr<std::vector<void*>> open() override {
    std::vector<void*> p;
    for (size_t a = 0; a < specs_.size(); ++a) {
      ZT_ASSIGN_OR_RETURN(void* m, swap_->map(a, /*writable=*/true));
      p.push_back(m);
    }
    return p;
  }
  Status close(bool written) override { return swap_->unmap(written); }
  size_t resident_bytes() const override { return swap_->buffer_bytes(); }
  size_t disk_bytes() const override { return swap_->disk_bytes(); }
  SwapArrays* swap() override { return swap_.get(); }

 private:
  std::unique_ptr<SwapArrays> swap_;
};

}  // namespace

StatusOr<std::unique_ptr<StateStore>> make_resident_store(std::vector<StateArraySpec> specs, size_t numel,
                                                          const Backend& backend) {
  std::vector<Arena> arrays;
  for (const StateArraySpec& s : specs) {
    const std::string what = "the optimizer state " + s.name;
    ZT_ASSIGN_OR_RETURN(Arena a, backend.allocate(numel, s.dtype, what.c_str()));
    arrays.push_back(std::move(a));
  }
  return std::unique_ptr<StateStore>(new ResidentStore(std::move(specs), numel, std::move(arrays)));
}

StatusOr<std::unique_ptr<StateStore>> make_swapped_store(std::vector<StateArraySpec> specs, size_t numel,
                                                         const SwapPlacement& where) {
  std::vector<SwapArraySpec> files;
  for (const StateArraySpec& s : specs) files.push_back({s.name, dtype_size(s.dtype), s.dir});
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<SwapArrays> swap, SwapArrays::create(where.io, where.dir, where.prefix,
                                                                            std::move(files), numel, where.chunk_elems,
                                                                            where.pin));
  return std::unique_ptr<StateStore>(new SwappedStore(std::move(specs), std::move(swap)));
}

}  // namespace zt
