// Memory figures from the OS: the process's peak and current resident set size, and what
// the host has available.
#pragma once

#include <cstddef>
#include <string>

namespace zt {

// Peak resident set size of this process, in bytes (getrusage ru_maxrss).
size_t peak_rss_bytes();
// Current resident set size, in bytes (/proc/self/statm); 0 if unavailable.
size_t current_rss_bytes();
// Starts a new resident peak: resident_peak_bytes() then reports the peak since this call
// (Linux resets VmHWM on writing 5 to /proc/self/clear_refs). False where it cannot.
bool reset_resident_peak();
// VmHWM of /proc/self/status: the resident peak since the start or the last
// reset_resident_peak(), in bytes; 0 if unavailable. (peak_rss_bytes is never reset.)
size_t resident_peak_bytes();
// What the host can still give without swapping (MemAvailable, /proc/meminfo), in bytes;
// 0 if unknown.
size_t available_host_memory();
// "1.23 GiB", "456.0 MiB", "789 B": for reports.
std::string format_bytes(double bytes);

}  // namespace zt
