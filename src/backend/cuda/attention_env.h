// ZT_CUDA_ATTENTION: which kernels run the CUDA backend's 16-bit attention, for comparing
// paths and for a device check that must still time a step when one path fails there.
//   unset or empty    flash attention where it serves the shape (flash_attention.h), its dQ
//                     reading the stored dS where flash_attention_stores_ds, else materialized
//   fp32              as the CPU's 16-bit table computes it (inputs widened, scores, P and dS
//                     in fp32, outputs and the saved P rounded once): slower, for comparing
//   materialized      phase 1's materialized kernels (T x T), not flash attention
//   flash-recompute   flash attention whose dQ kernel always recomputes S, P and dP
// Any other value is refused (check_attention_env), never read as the default.
// Invariant: the value is read once per process; the predicates below agree with it.
// Thread-safety: the predicates may be called from any thread.
#pragma once

#include "core/status.h"

namespace zt::cuda {

// OK when ZT_CUDA_ATTENTION is unset, empty or one of the values above; else
// InvalidArgument naming the variable, its value and the allowed values.
Status check_attention_env();

bool attention_in_fp32();
bool attention_materialized();
// False under flash-recompute: the flash backward's dQ kernel then recomputes dS.
bool flash_stores_ds();
// The banner's words for the 16-bit attention path.
const char* attention_path_name();

}  // namespace zt::cuda
