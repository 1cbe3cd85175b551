// Transparent huge-page advice and the kernel's THP mode; see huge_pages.h.
#include "core/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <fstream>

namespace zt {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

}  // namespace

bool advise_huge_pages(void* p, size_t bytes) {
  if (p == nullptr || bytes < kHugePageAdviceMinBytes) return false;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePage - 1);
  if (hi <= lo) return false;
  return madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) == 0;
}

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!in || !std::getline(in, line)) return "unavailable";
  return parse_thp_mode(line);
}

std::string parse_thp_mode(const std::string& line) {
  const size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

std::string describe_thp(bool* slow) { return describe_thp_mode(thp_mode(), slow); }

std::string describe_thp_mode(const std::string& mode, bool* slow) {
  *slow = mode != "always" && mode != "madvise";
  if (mode == "always") return "always (every block huge-page backed)";
  if (mode == "madvise") return "madvise (zerotrain advises its blocks of 8 MiB and more)";
  return mode + " (4 KiB pages only: the streaming kernels and GEMMs run slower; "
                "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)";
}

}  // namespace zt
