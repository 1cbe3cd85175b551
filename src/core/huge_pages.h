// Transparent huge pages for zerotrain's large host blocks (parameters, gradients, optimizer
// state, activations). Linux backs memory with 4 KiB pages unless a block is advised
// (MADV_HUGEPAGE) or the system's THP mode is "always"; Debian and Ubuntu ship "madvise".
// The step's streaming kernels (AdamW, the gradient norm, the norms) and the GEMMs walk
// gigabytes through 4 KiB pages with a TLB miss every 64 cache lines: on a 2-core EPYC,
// GPT-2 small's step took 3.5-9 % longer, and its AdamW up to 1.5x as long, without the
// advice (bench/huge_pages.sh in bench/RESULTS.md, issue 32).
// Invariants: advice never changes a block's size or contents, and never its resident
// bytes once the block is fully written (only the 2 MiB-aligned interior is advised, so
// the head and tail stay 4 KiB pages); a kernel that refuses the advice (THP "never", or
// no THP at all) leaves the block as it was, and thp_mode() says so for the banner.
// Thread-safety: all functions are safe from any thread.
#pragma once

#include <cstddef>
#include <string>

namespace zt {

// Blocks smaller than this are not advised (the interior would be at most a page or two).
inline constexpr size_t kHugePageAdviceMinBytes = size_t{8} << 20;

// Advises the 2 MiB-aligned interior of [p, p + bytes) as huge-page backed, before its
// first touch. Does nothing below kHugePageAdviceMinBytes. Returns whether advice was given.
bool advise_huge_pages(void* p, size_t bytes);

// The kernel's THP mode from /sys/kernel/mm/transparent_hugepage/enabled: "always",
// "madvise", "never", or "unavailable" (no such file).
std::string thp_mode();
// The bracketed mode of that file's line ("always [madvise] never" -> "madvise"), or
// "unavailable" for a line without one.
std::string parse_thp_mode(const std::string& line);


// One line for the banner and doctor: the mode and what it means for this process, e.g.
// "madvise (zerotrain advises its blocks of 8 MiB and more)". slow is set where the machine
// forces 4 KiB pages ("never", "unavailable").
std::string describe_thp(bool* slow);
// The same for a given mode.
std::string describe_thp_mode(const std::string& mode, bool* slow);

}  // namespace zt
