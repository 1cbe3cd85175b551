// Names and sizes of the communication enums, and CommStats' derived figures.
#include "comm/process_group.h"

namespace zt {

const char* comm_op_name(CommOp op) {
  switch (op) {
    case CommOp::kAllReduce: return "all_reduce";
    case CommOp::kReduceScatter: return "reduce_scatter";
    case CommOp::kAllGather: return "all_gather";
    case CommOp::kBroadcast: return "broadcast";
    case CommOp::kSend: return "send";
    case CommOp::kRecv: return "recv";
    case CommOp::kBarrier: return "barrier";
    case CommOp::kAllToAll: return "all_to_all";
  }
  return "unknown";
}

size_t comm_dtype_size(CommDType dtype) {
  switch (dtype) {
    case CommDType::kF32: return 4;
    case CommDType::kF64: return 8;
    case CommDType::kI64: return 8;
    case CommDType::kBF16: return 2;
    case CommDType::kF16: return 2;
  }
  return 0;
}

const char* comm_dtype_name(CommDType dtype) {
  switch (dtype) {
    case CommDType::kF32: return "f32";
    case CommDType::kF64: return "f64";
    case CommDType::kI64: return "i64";
    case CommDType::kBF16: return "bf16";
    case CommDType::kF16: return "f16";
  }
  return "?";
}

double CommStats::hidden_fraction() const {
  if (busy_seconds <= 0.0) return 0.0;
  const double f = (busy_seconds - exposed_seconds) / busy_seconds;
  return f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
}

int64_t CommStats::total_logical_bytes() const {
  int64_t total = 0;
  for (const CommOpStats& s : ops) total += s.logical_bytes;
  return total;
}

}  // namespace zt
