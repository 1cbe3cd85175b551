// All-gather of elements of any 2- or 4-byte type through ProcessGroup::all_gather,
// which moves 32-bit words: 4-byte elements go as they are; 2-byte ones (bf16, f16) two
// to a word, so every rank's segment needs an even length and start (mixed precision
// aligns its ZeRO partition to 2; tp slices of B T C activations are even). No arithmetic
// touches the data: bits arrive unchanged.
// Thread-safety: as ProcessGroup::all_gather.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/process_group.h"

namespace zt {

// data: the whole range (counts summed), elem_bytes (2 or 4) each; counts per rank, in elements.
WorkHandle all_gather_elements(ProcessGroup* group, void* data, std::vector<size_t> counts, size_t elem_bytes);

}  // namespace zt
