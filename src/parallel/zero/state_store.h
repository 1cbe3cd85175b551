// StateStore: where the per-element arrays of a rank's optimizer range live: the fp32
// master (mixed precision), the optimizer's state (Adam's moments) and, with parameter
// offload, the parameter shard. Two implementations of one interface:
//   resident: arenas of the backend (every array in memory; one chunk per pass);
//   swapped:  SwapArrays in scratch files under an nvme_path (DeepSpeed's NVMe offload),
//             streamed through three buffer sets in sub_group_size chunks.
// ModelStates drives both the same way, so offload adds no branch to the engine.
// Thread-safety: one thread (the training loop).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "io/swap_arrays.h"

namespace zt {

struct StateArraySpec {
  std::string name;  // "master", "param", "exp_avg", ...
  DType dtype;
  std::string dir;   // swapped: its folder (empty: the placement's)
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Every chunk of the arrays in order (see SwapArrays::stream for the flags).
  virtual Status stream(const std::vector<bool>& read, const std::vector<bool>& write, const ChunkFn& fn) = 0;
  // Whole arrays as memory until close() (swapped: the files mapped through the page
  // cache); close(true) after writing through them.
  virtual StatusOr<std::vector<void*>> open() = 0;
  virtual Status close(bool written) = 0;
  virtual size_t resident_bytes() const = 0;  // arrays and swap buffers in memory
  virtual size_t disk_bytes() const = 0;
  virtual SwapArrays* swap() { return nullptr; }
  const std::vector<StateArraySpec>& specs() const { return specs_; }
  int index(const std::string& name) const;  // -1 when absent

 protected:
  explicit StateStore(std::vector<StateArraySpec> specs) : specs_(std::move(specs)) {}
  std::vector<StateArraySpec> specs_;
};

StatusOr<std::unique_ptr<StateStore>> make_resident_store(std::vector<StateArraySpec> specs, size_t numel,
                                                          const Backend& backend);

struct SwapPlacement {
  IoEngine* io = nullptr;
  std::string dir;           // nvme_path
  std::string prefix;        // file name prefix, unique per rank
  size_t chunk_elems = 0;    // sub_group_size
  bool pin = true;
};
StatusOr<std::unique_ptr<StateStore>> make_swapped_store(std::vector<StateArraySpec> specs, size_t numel,
                                                         const SwapPlacement& where);

}  // namespace zt
