// ZT_CUDA_ATTENTION's reading (attention_env.h).
#include "backend/cuda/attention_env.h"

#include <cstdlib>
#include <string>

namespace zt::cuda {

namespace {

std::string attention_env() {
  const char* v = std::getenv("ZT_CUDA_ATTENTION");
  return v == nullptr ? "" : v;
}

const std::string& attention_once() {
  static const std::string v = attention_env();
  return v;
}

}  // namespace

Status check_attention_env() {
  const std::string v = attention_env();
  if (v.empty() || v == "fp32" || v == "materialized" || v == "flash-recompute") return Status::OK();
  return Status::InvalidArgument("ZT_CUDA_ATTENTION=\"" + v +
                                 "\": allowed are fp32, materialized, flash-recompute, or unset (flash attention)");
}

bool attention_in_fp32() { return attention_once() == "fp32"; }

bool attention_materialized() { return attention_once() == "materialized"; }

bool flash_stores_ds() { return attention_once() != "flash-recompute"; }

const char* attention_path_name() {
  if (attention_in_fp32()) return "materialized (T x T), computed in fp32 (ZT_CUDA_ATTENTION=fp32)";
  if (attention_materialized()) return "materialized (T x T) (ZT_CUDA_ATTENTION=materialized)";
  if (!flash_stores_ds()) {
    return "flash for head sizes 16, 32 and 64, dQ recomputing dS (ZT_CUDA_ATTENTION=flash-recompute), else "
           "materialized (T x T)";
  }
  return "flash for head sizes 16, 32 and 64, else materialized (T x T)";
}

}  // namespace zt::cuda
