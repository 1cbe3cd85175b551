// half_rows: the one adapter behind the row-wise 16-bit kernels (with half_flat for the
// elementwise ones, half_ops_impl.h). It is the 16-bit form of an fp32 row kernel: the rows
// [0, N) go in chunks, and each argument says its role. The adapter widens what the kernel
// reads, runs the fp32 kernel on the chunk and narrows what it writes:
//   HalfIn{p, w}           rows of w 16-bit values the kernel reads (widened per chunk); p
//                          may be null, and the kernel then gets null
//   HalfGather{t, idx, w}  row r is row idx[r] of table t (w values a row; an embedding)
//   HalfOut{p, w}          rows the kernel writes (narrowed after it)
//   HalfInOut{src, dst, w} rows widened from src, written by the kernel, narrowed into dst
//                          (src == dst for an accumulated gradient)
//   HalfWhole{p, n}        n 16-bit values every row reads (a bias, a norm's weight): widened
//                          once into scratch; p may be null, and the kernel then gets null
//   HalfWeight{p, n}       the same for a matrix: widened once into the calling thread's
//                          half_weight_scratch (kept between calls, apart from the slots)
//   HalfCycle{p, period, w} row r is row r % period of p (learned positions); p may be null
//   ColumnsOf{p, N, k}     fp32 laid out (k, N): the kernel gets the chunk's columns as (k, n)
//   RowData<T>{p, w}       fp32 or int32 data, w per row, read or written in place (p + r0 * w;
//                          null stays null)
//   kChunkRows             the chunk's row count (the kernel's N)
//   kChunkFirst            the chunk's first row r0 (a kernel that needs its position)
//   any other value        passed as it is (C, eps, a vocabulary slice)
// The kernel is called with one argument per role, in order: a function, or a lambda for
// kernels that take one buffer twice (in place in fp32).
// A kernel over whole sequences runs one sequence at a time (its rows are that sequence's
// positions, kChunkFirst the first of the chunk).
// Invariants: the fp32 kernel's rows are independent and its sums over rows run in row
// order, so chunking changes no bit. Chunks hold half_chunk_rows(sum of the row widths of
// the chunked roles) rows, or what a leading HalfChunking says (the GEMMs: their fp32 sums
// run chunk after chunk, so their chunk size is part of the result). Each chunked or
// HalfWhole role takes the next scratch slot (at most kHalfScratchSlots).
// half_rows_independent is the form for kernels whose rows share nothing: their chunks run
// on all threads at once, each in its thread's scratch.
// Thread-safety: the scratch is the calling thread's (each thread's, in half_rows_independent).
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>

#include "kernels/cpu/half_ops_impl.h"

namespace zt {

struct HalfIn {
  const half_t* p;
  int64_t w;
  float* x = nullptr;
};
struct HalfOut {
  half_t* p;
  int64_t w;
  float* x = nullptr;
};
struct HalfInOut {
  const half_t* src;
  half_t* dst;
  int64_t w;
  float* x = nullptr;
};
struct HalfGather {
  const half_t* table;
  const int32_t* index;
  int64_t w;
  float* x = nullptr;
};
struct HalfWhole {
  const half_t* p;
  int64_t n;
  float* x = nullptr;
};
struct HalfWeight {
  const half_t* p;
  int64_t n;
  float* buffer = nullptr;
};
struct HalfCycle {
  const half_t* p;
  int64_t period;
  int64_t w;
  float* x = nullptr;
};
struct ColumnsOf {
  const float* p;
  int64_t N;
  int64_t k;
  float* x = nullptr;
};
// Rows per chunk when the roles' widths do not say it: half_chunk_rows(floats_per_row, max_rows).
struct HalfChunking {
  int64_t floats_per_row;
  int64_t max_rows;
};
// The most rows a chunk may hold, its width taken from the roles.
struct HalfMaxRows {
  int64_t rows;
};
template <typename T>
struct RowData {
  T* p;
  int64_t w;
};
struct ChunkRows {};
inline constexpr ChunkRows kChunkRows{};
struct ChunkFirst {};
inline constexpr ChunkFirst kChunkFirst{};

namespace half_rows_detail {

// The roles that take a chunk of widened rows.
template <typename R>
constexpr bool kChunked = std::is_same_v<R, HalfIn> || std::is_same_v<R, HalfOut> || std::is_same_v<R, HalfInOut> ||
                          std::is_same_v<R, HalfGather> || std::is_same_v<R, HalfCycle> || std::is_same_v<R, ColumnsOf>;

// Floats per row of a chunked role's scratch.
template <typename R>
int64_t chunk_width(const R& r) {
  if constexpr (std::is_same_v<R, ColumnsOf>) {
    return r.k;
  } else {
    return r.w;
  }
}

// Floats per row of the chunk's scratch.
template <typename R>
int64_t row_floats(const R& r) {
  if constexpr (kChunked<R>) return chunk_width(r);
  return 0;
}

// Takes scratch (and widens a HalfWhole once).
template <DType D, typename R>
void setup(R& r, int* slot, int64_t rows) {
  if constexpr (std::is_same_v<R, HalfIn> || std::is_same_v<R, HalfCycle>) {
    const int s = (*slot)++;
    if (r.p != nullptr) r.x = half_scratch(s, static_cast<size_t>(rows * r.w));
  } else if constexpr (kChunked<R>) {
    r.x = half_scratch((*slot)++, static_cast<size_t>(rows * chunk_width(r)));
  } else if constexpr (std::is_same_v<R, HalfWeight>) {
    if (r.p != nullptr) {
      r.buffer = half_weight_scratch(static_cast<size_t>(r.n));
      half_to_f32(D, r.buffer, r.p, r.n);
    }
  } else if constexpr (std::is_same_v<R, HalfWhole>) {
    const int s = (*slot)++;
    if (r.p != nullptr) {
      r.x = half_scratch(s, static_cast<size_t>(r.n));
      half_to_f32(D, r.x, r.p, r.n);
    }
  }
}

template <DType D, typename R>
void load(R& r, int64_t r0, int64_t n) {
  if constexpr (std::is_same_v<R, HalfIn>) {
    if (r.p != nullptr) half_to_f32(D, r.x, r.p + r0 * r.w, n * r.w);
  }
  if constexpr (std::is_same_v<R, HalfInOut>) half_to_f32(D, r.x, r.src + r0 * r.w, n * r.w);
  if constexpr (std::is_same_v<R, HalfGather>) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) half_to_f32(D, r.x + i * r.w, r.table + int64_t{r.index[r0 + i]} * r.w, r.w);
  }
  if constexpr (std::is_same_v<R, HalfCycle>) {
    if (r.p == nullptr) return;
    for (int64_t i = 0; i < n; ++i) half_to_f32(D, r.x + i * r.w, r.p + ((r0 + i) % r.period) * r.w, r.w);
  }
  if constexpr (std::is_same_v<R, ColumnsOf>) {
    for (int64_t j = 0; j < r.k; ++j) {
      for (int64_t i = 0; i < n; ++i) r.x[j * n + i] = r.p[j * r.N + r0 + i];
    }
  }
}

template <typename R>
auto arg(R& r, int64_t r0, int64_t n) {
  if constexpr (kChunked<R> || std::is_same_v<R, HalfWhole>) {
    return static_cast<float*>(r.x);
  } else if constexpr (std::is_same_v<R, HalfWeight>) {
    return static_cast<const float*>(r.buffer);
  } else if constexpr (std::is_same_v<R, ChunkRows>) {
    return n;
  } else if constexpr (std::is_same_v<R, ChunkFirst>) {
    return r0;
  } else if constexpr (requires { r.p + r0 * r.w; }) {
    return r.p == nullptr ? r.p : r.p + r0 * r.w;  // RowData
  } else {
    return r;
  }
}

template <DType D, typename R>
void store(R& r, int64_t r0, int64_t n) {
  if constexpr (std::is_same_v<R, HalfOut>) f32_to_half(D, r.p + r0 * r.w, r.x, n * r.w);
  if constexpr (std::is_same_v<R, HalfInOut>) f32_to_half(D, r.dst + r0 * r.w, r.x, n * r.w);
}

// One chunk, rows [r0, r0 + n): widen what the kernel reads, run it, narrow what it wrote.
template <DType D, typename K, typename T>
void run_chunk(T& t, K& kernel, int64_t r0, int64_t n) {
  std::apply([&](auto&... r) { (load<D>(r, r0, n), ...); }, t);
  std::apply([&](auto&... r) { kernel(arg(r, r0, n)...); }, t);
  std::apply([&](auto&... r) { (store<D>(r, r0, n), ...); }, t);
}

// Floats per row of the chunked roles' scratch (at least 1).
template <typename... R>
int64_t chunk_floats(const R&... roles) {
  const int64_t width = (int64_t{0} + ... + row_floats(roles));
  return width > 0 ? width : 1;
}

}  // namespace half_rows_detail

template <DType D, typename K, typename... R>
void half_rows(HalfChunking chunking, int64_t N, K&& kernel, R... roles) {
  namespace d = half_rows_detail;
  std::tuple<R...> t{roles...};
  const int64_t rows = half_chunk_rows(chunking.floats_per_row, chunking.max_rows);
  int slot = 0;
  std::apply([&](auto&... r) { (d::setup<D>(r, &slot, rows), ...); }, t);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) { d::run_chunk<D>(t, kernel, r0, n); });
}

// The form for kernels whose rows share nothing (no sum over rows, no HalfWeight): chunks
// sized for a core's cache (half_cache_floats() of the chunked roles' scratch, at most
// kHalfChunkRows rows) run on all threads at once, each thread widening, computing and
// narrowing its own chunks in its own scratch, so the widened rows never leave the cache;
// the fp32 kernel's own loop is then a one-thread team. Each row's arithmetic is the fp32
// kernel's, so the same bits as half_rows.
template <DType D, typename K, typename... R>
void half_rows_independent(int64_t N, K&& kernel, R... roles) {
  namespace d = half_rows_detail;
  static_assert(!(std::is_same_v<R, HalfWeight> || ...), "half_rows_independent: a HalfWeight is shared by every row");
  const int64_t rows = half_chunk_rows(d::chunk_floats(roles...), kHalfChunkRows, half_cache_floats());
  const int64_t chunks = (N + rows - 1) / rows;
#pragma omp parallel if (chunks > 1)
  {
    std::tuple<R...> t{roles...};
    int slot = 0;
    std::apply([&](auto&... r) { (d::setup<D>(r, &slot, rows), ...); }, t);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t r0 = c * rows;
      d::run_chunk<D>(t, kernel, r0, N - r0 < rows ? N - r0 : rows);
    }
  }
}

// Chunks sized by the chunked roles' widths, at most max_rows rows (the norms' backward,
// whose sums over rows keep chunks in order, takes kHalfSumChunkRows).
template <DType D, typename K, typename... R>
void half_rows(HalfMaxRows max_rows, int64_t N, K&& kernel, R... roles) {
  half_rows<D>(HalfChunking{half_rows_detail::chunk_floats(roles...), max_rows.rows}, N, kernel, roles...);
}

// The row-wise kernels: at most kHalfChunkRows rows a chunk.
template <DType D, typename K, typename... R>
void half_rows(int64_t N, K&& kernel, R... roles) {
  half_rows<D>(HalfMaxRows{kHalfChunkRows}, N, kernel, roles...);
}

}  // namespace zt
