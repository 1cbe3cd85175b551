// The swap directory probe; see disk_probe.h.
#include "planner/disk_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/timer.h"
#include "io/async_io.h"
#include "io/checksum.h"
#include "io/filesystem.h"
#include "io/swap_arrays.h"
#include "planner/swap_model.h"

namespace zt {

namespace {

constexpr int kPasses = 3;

// Seconds of one pass of `swap` (read: every array read in as well as written back).
StatusOr<double> timed_pass(SwapArrays& swap, bool read) {
  const std::vector<bool> r(swap.specs().size(), read), w(swap.specs().size(), true);
  const double t0 = now_seconds();
  ZT_RETURN_IF_ERROR(swap.stream(r, w, [](size_t, size_t, void* const*) { return Status::OK(); }));
  return now_seconds() - t0;
}

// The checksums' rate over one chunk-sized buffer on this process's threads: the best of
// repetitions over at least 50 ms (the first touches the pages).
double checksum_rate(size_t bytes) {
  std::vector<unsigned char> buf(bytes, 0x5a);
  double best = 0.0;
  const double t0 = now_seconds();
  do {
    const double t = now_seconds();
    (void)checksum_blocks(buf.data(), buf.size(), kSumBlock);
    best = std::max(best, static_cast<double>(bytes) / std::max(now_seconds() - t, 1e-9));
  } while (now_seconds() - t0 < 0.05);
  return best;
}

// The rate at which swap_model.h's pass with no update takes `seconds`: the mixed rate, or
// where `both` the write rate too (one rate for all the pass's traffic). The model is
// decreasing in it, so bisection on a log scale (1 MB/s .. 10 TB/s); false when even 10
// TB/s leaves the model longer than the pass (its fixed terms alone are).
bool fit_rate(const SwapPass& pass, double seconds, bool both, DiskCalibration* d) {
  const auto model = [&](double rate) {
    DiskCalibration x = *d;
    x.mixed_bytes_per_s = rate;
    if (both) x.write_bytes_per_s = rate;
    return swap_pass_seconds(pass, 0.0, x);
  };
  double lo = 1e6, hi = 1e13;
  if (model(hi) > seconds) return false;
  for (int i = 0; i < 100; ++i) (model(std::sqrt(lo * hi)) > seconds ? lo : hi) = std::sqrt(lo * hi);
  d->mixed_bytes_per_s = hi;
  if (both) d->write_bytes_per_s = hi;
  return true;
}

StatusOr<DiskCalibration> measure(const std::string& dir, const DiskProbeOptions& o) {
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<IoEngine> io, IoEngine::create(o.aio));
  const size_t numel = std::max<size_t>(1, o.bytes_per_array / sizeof(float));
  const std::string prefix = "zt-calibrate." + std::to_string(::getpid());
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<SwapArrays> swap,
                      SwapArrays::create(io.get(), dir, prefix, {{"a", sizeof(float), ""}, {"b", sizeof(float), ""}}, numel,
                                         (numel + std::max<size_t>(o.chunks, 1) - 1) / std::max<size_t>(o.chunks, 1),
                                         o.pin));
  ZT_ASSIGN_OR_RETURN(const double written, timed_pass(*swap, false));  // the files' first write
  std::vector<double> mixed;
  for (int p = 0; p < kPasses; ++p) {
    ZT_ASSIGN_OR_RETURN(const double t, timed_pass(*swap, true));
    mixed.push_back(t);
  }
  std::sort(mixed.begin(), mixed.end());
  const double bytes = static_cast<double>(swap->disk_bytes());
  DiskCalibration d;
  d.write_bytes_per_s = bytes / std::max(written, 1e-9);
  d.checksum_bytes_per_s = checksum_rate(swap->chunk_elems() * sizeof(float));
  const SwapPass pass{bytes, bytes, swap->chunks()};
  // The files' first write can be slower than the passes' writes (the file system allocating
  // them); where it alone exceeds the pass, one rate is fitted for all of it.
  if (!fit_rate(pass, mixed[mixed.size() / 2], false, &d) && !fit_rate(pass, mixed[mixed.size() / 2], true, &d)) {
    return Status::Internal("its passes (" + std::to_string(mixed[mixed.size() / 2]) + " s) are shorter than the "
                            "checksums over them: the rates cannot be fitted");
  }
  d.direct = swap->direct();
  d.io = io->mode();
  d.probe_bytes_per_array = static_cast<double>(numel * sizeof(float));
  d.probe_chunks = swap->chunks();
  return d;
}

}  // namespace

StatusOr<DiskCalibration> probe_swap_disk(const std::string& dir, const DiskProbeOptions& options) {
  auto d = measure(dir, options);
  if (!d.ok()) return Status(d.status().code(), "measuring swap directory " + dir + ": " + d.status().message());
  return d;
}

}  // namespace zt
