// Rewrites a DeepSpeed config into the vocabulary the section readers know, before they
// read it, and says what it did (one line per change, printed in the banner):
//   apply_aliases: legacy and alias names (key_tables.h) moved to their modern keys,
//     with the value mapped where the old key meant something else (cpu_offload: true
//     -> offload_optimizer {"device": "cpu"}; "zero_optimization": true -> stage 1).
//   resolve_auto: every "auto" value (HuggingFace's convention) replaced by what
//     auto_rules() says, except the batch triple, which needs the data-parallel size
//     and is resolved by resolve_batch (config.h). An "auto" anywhere else is an error
//     naming the pointer.
// Invariant: after both, the only "auto" strings left are the batch keys and the ones
// DeepSpeed itself defines ("pipeline/stages", "activation_checkpointing" has none).
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "io/json_strict.h"

namespace zt {

// What resolving "auto" may depend on besides the file itself.
struct AutoContext {
  bool native_bf16 = false;  // the CPU computes bf16 natively (AVX-512 BF16 or AMX)
};
// The context of this machine (cpu_info()).
AutoContext machine_auto_context();

Status apply_aliases(Json* root, std::vector<std::string>* notes);
Status resolve_auto(Json* root, const AutoContext& ctx, std::vector<std::string>* notes);

// True if v is the string "auto".
inline bool is_auto(const Json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

}  // namespace zt
