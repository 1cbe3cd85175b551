// Process memory figures from the OS: peak and current resident set size.
#pragma once

#include <cstddef>
#include <string>

namespace zt {

// Peak resident set size of this process, in bytes (getrusage ru_maxrss).
size_t peak_rss_bytes();
// Current resident set size, in bytes (/proc/self/statm); 0 if unavailable.
size_t current_rss_bytes();
// "1.23 GiB", "456.0 MiB", "789 B": for reports.
std::string format_bytes(double bytes);

}  // namespace zt
