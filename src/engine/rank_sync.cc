// Whole-run agreements between ranks; see rank_sync.h.
#include "engine/rank_sync.h"

#include <algorithm>

#include "comm/gather_bytes.h"

namespace zt {

Status all_ranks_ready(ProcessGroup* group) {
  if (group == nullptr) return Status::OK();
  return group->barrier()->wait();
}

StatusOr<double> sum_over_ranks(ProcessGroup* group, double v) {
  if (group != nullptr) ZT_RETURN_IF_ERROR(group->all_reduce(&v, 1, CommDType::kF64)->wait());
  return v;
}

StatusOr<std::vector<double>> rows_of_ranks(ProcessGroup* group, const std::vector<double>& row) {
  if (group == nullptr) return row;
  const size_t n = row.size();
  std::vector<double> all(n * static_cast<size_t>(group->size()), 0.0);  // summed: each rank fills its own row
  std::copy(row.begin(), row.end(), all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<size_t>(group->rank())));
  ZT_RETURN_IF_ERROR(group->all_reduce(all.data(), all.size(), CommDType::kF64)->wait());
  return all;
}

StatusOr<std::vector<std::string>> strings_at_root(ProcessGroup* group, const std::string& mine) {
  if (group == nullptr) return std::vector<std::string>{mine};
  return gather_bytes(group, mine, 0);
}

StatusOr<bool> root_decides(ProcessGroup* group, bool decision) {
  char flag = decision ? 1 : 0;
  if (group != nullptr) ZT_RETURN_IF_ERROR(group->broadcast(&flag, 1, 0)->wait());
  return flag != 0;
}

}  // namespace zt
