// The process allocator: zerotrain links jemalloc (Debian's libjemalloc2), whose malloc and
// free serve every library in the process (oneDNN, OpenBLAS, Open MPI), so that a rank's
// resident memory follows what it allocates and the planner can predict it
// (docs/design/planner.md).
//
// Why not glibc's malloc: it serves a block of at least its mmap threshold with mmap, and
// freeing such a block raises the threshold to that size (up to 32 MiB); blocks of that
// size then come from its heaps, where what is freed stays resident and what other threads
// free at timing-dependent moments decides how the heaps fragment. oneDNN's sgemm allocates
// and frees its packing buffers (0.95 and 2.5 MB) on every call. Measured on one pp 2 run
// repeated (bench/RESULTS.md, planner section): stage 0 peaked at 244 to 278 MiB with
// glibc; at 241.0 MiB every time with glibc's threshold fixed at 128 KiB, but then every
// oneDNN buffer is a fresh mmap and a micro-batch-2 step took 9 % longer; at 243.7 to
// 244.6 MiB with jemalloc, whose steps were the fastest of the three.
// Invariant: malloc in this process is jemalloc's (allocator_test checks it).
// Thread-safety: all functions are safe from any thread.
#pragma once

#include <cstddef>
#include <string>

namespace zt {

// "jemalloc 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c", for the doctor and reports.
std::string allocator_description();
// Bytes this thread has allocated through jemalloc so far (0 when unavailable).
size_t allocator_thread_allocated_bytes();

}  // namespace zt
