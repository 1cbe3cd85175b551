// `zerotrain doctor`: runs the probes (cli/doctor_probes.h, core/cpu_info.h, and the CPU
// backend's self-description, backend/cpu/cpu_probes.h) section by section, prints each fact as soon as it is known,
// and sorts what it found into warnings (printed, exit 0) and problems (exit 1). Each
// warning and problem names the value it saw and what to do about it.
// Invariant: nothing here aborts on a bad environment: ZT_GEMM and ZT_ISA are read
// through their Status-returning selectors, and gemm_path() (which aborts on a bad
// ZT_GEMM) is reached only through sgemm when gemm_path_report().selected is OK.
#include "cli/doctor_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cli/doctor_cuda.h"
#include "backend/cpu/cpu_probes.h"
#include "cli/doctor_probes.h"
#include "cli/exit_status.h"
#include "core/allocator.h"
#include "core/cpu_features.h"
#include "core/cpu_info.h"
#include "core/cpu_topology.h"
#include "core/huge_pages.h"
#include "core/memory_stats.h"
#include "core/threads.h"
#include "core/version.h"

namespace zt {

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int kGemmN = 1024;  // the speed probe's M = N = K

// Facts go to stdout as they are found; warnings and problems are listed at the end.
class Report {
 public:
  void fact(const char* label, const std::string& text) {
    std::printf("%-15s%s\n", label, text.c_str());
    std::fflush(stdout);
  }
  void warn(std::string text) { warnings_.push_back(std::move(text)); }
  void problem(std::string text) { problems_.push_back(std::move(text)); }

  // Prints the lists; returns the exit status.
  int finish() const {
    if (!warnings_.empty()) std::printf("\nwarnings:\n");
    for (const std::string& w : warnings_) std::printf("  - %s\n", w.c_str());
    if (problems_.empty()) {
      std::printf("\nno problems found\n");
      return kExitOk;
    }
    std::printf("\nproblems:\n");
    for (const std::string& p : problems_) std::printf("  - %s\n", p.c_str());
    return kExitFailure;
  }

 private:
  std::vector<std::string> warnings_;
  std::vector<std::string> problems_;
};

const char* yes_no(bool b) { return b ? "yes" : "no"; }

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}


// The ISA of an OpenBLAS core's kernels, in words ("scalar" would undersell SSE3).
std::string core_isa_words(Isa isa) { return isa == Isa::kScalar ? "pre-AVX2, no FMA" : isa_name(isa); }

void report_cpu(const CpuInfo& c, Report* r) {
  const std::string name = c.model_name.empty() ? "unnamed CPU" : c.model_name;
  r->fact("cpu", name + " (" + c.vendor + " family " + std::to_string(c.family) + " model " + std::to_string(c.model) +
                     " stepping " + std::to_string(c.stepping) + "), " + std::to_string(c.logical_cpus) +
                     " logical CPUs");
}

void report_isa(const CpuInfo& c, Report* r) {
  const Isa found = detect_isa();
  std::string text = std::string("found ") + isa_name(found) + " (avx2+fma " + yes_no(c.avx2 && c.fma) +
                     ", avx512f " + yes_no(c.avx512f && c.os_avx512) + ", avx512_bf16 " + yes_no(c.avx512_bf16) +
                     ", avx512_fp16 " + yes_no(c.avx512_fp16) + ", avx512_vnni " + yes_no(c.avx512_vnni) + ", amx " +
                     yes_no(c.amx_tile) + ")";
  const Status isa_status = active_isa_status();
  if (!isa_status.ok()) {
    r->fact("isa", text + ", kernels: none (ZT_ISA is invalid)");
    r->problem(isa_status.message() + "; unset ZT_ISA (kernels then use " + isa_name(found) + ")");
    return;
  }
  const Isa active = active_isa();
  const std::string zt_isa = env_or("ZT_ISA", "");
  r->fact("isa", text + ", kernels use " + isa_name(active) + (zt_isa.empty() ? "" : " (ZT_ISA=" + zt_isa + ")"));
  if (active != found) {
    r->warn("ZT_ISA=" + zt_isa + " holds the kernels at " + isa_name(active) + " on a CPU with " + isa_name(found) +
            "; unset ZT_ISA outside tests and benchmarks");
  }
  if (c.avx512f && !c.os_avx512) {
    r->warn("the CPU has AVX-512 but the OS does not enable ZMM state in XCR0, so kernels stay at avx2; "
            "check the kernel's boot options (noxsave, clearcpuid) or the hypervisor's CPU model");
  }
  if (found == Isa::kScalar) {
    r->warn("no AVX2+FMA usable (CPU or OS): kernels run scalar code, several times slower than on an AVX2 machine");
  }
}

void report_amx(const CpuInfo& c, Report* r) {
  if (!c.amx_tile) {
    r->fact("amx", "not reported by this CPU");
    return;
  }
  r->fact("amx", std::string("tiles reported (amx_bf16 ") + yes_no(c.amx_bf16) + ", amx_int8 " + yes_no(c.amx_int8) +
                     "), OS enabled: " + yes_no(c.os_amx) + ", permission: " +
                     (c.amx_permitted ? "granted" : "refused"));
  if (!c.os_amx || !c.amx_permitted) {
    r->warn("the CPU has AMX tiles but Linux does not let this process use them (it needs Linux >= 5.16); "
            "oneDNN falls back to AVX-512 for bf16 work (zerotrain's fp32 kernels do not use AMX)");
  }
}

void report_openblas(const GemmPathReport& p, Report* r) {
  std::string text = p.openblas_version + " core=" + p.openblas_core +
                     (p.openblas_core_forced ? " (forced by OPENBLAS_CORETYPE=" + env_or("OPENBLAS_CORETYPE", "") + ")"
                                             : " (detected)");
  if (p.openblas_sound) {
    text += ", sound: its kernels use " + core_isa_words(p.openblas_core_isa) + " on a CPU with " +
            isa_name(p.cpu_isa);
  } else {
    text += ", MISMATCH: its kernels use " + core_isa_words(p.openblas_core_isa) + " on a CPU with " +
            isa_name(p.cpu_isa) + " (OPENBLAS_CORETYPE=" + p.suggested_core + " matches)";
  }
  r->fact("openblas", text);
  if (p.uses_slow_core) {
    r->problem("GEMMs run on OpenBLAS's " + p.openblas_core + " kernels (" + core_isa_words(p.openblas_core_isa) +
               "), older than this " + isa_name(p.cpu_isa) + " CPU, because ZT_GEMM=openblas: unset ZT_GEMM " +
               "(zerotrain then routes around the old core through oneDNN) or set OPENBLAS_CORETYPE=" +
               p.suggested_core);
  } else if (!p.warning.empty()) {
    r->warn(p.warning);
  }
}

void report_gemm_speed(const GemmPathReport& p, const DoctorOptions& options, Report* r) {
  const GemmSpeed s = measure_gemm_speed(kGemmN, options.gemm_seconds);
  const double peak = measure_fma_peak(num_threads(), options.gemm_seconds);
  const std::string n = std::to_string(kGemmN);
  std::string text = "X.W^T " + fixed(s.forward_gflops, 1) + " GFLOP/s (" + p.forward_library + "), dY.W " +
                     fixed(s.backward_gflops, 1) + " GFLOP/s (" + p.backward_library + ") on " + n + "^3";
  if (peak > 0.0) {
    text += " = " + fixed(100.0 * s.forward_gflops / peak, 0) + "% / " + fixed(100.0 * s.backward_gflops / peak, 0) +
            "% of the measured FMA peak " + fixed(peak, 1) + " GFLOP/s (" + std::to_string(num_threads()) +
            " threads)";
  } else {
    text += " (no FMA peak: the CPU lacks AVX2+FMA)";
  }
  r->fact("gemm speed", text);
  if (s.bf16_gflops > 0.0) {
    r->fact("bf16 gemm", s.bf16_impl + ", X.W^T " + fixed(s.bf16_gflops, 1) + " GFLOP/s on " + n + "^3 = " +
                             fixed(s.bf16_gflops / s.forward_gflops, 2) + "x fp32 (bf16 operands, fp32 accumulation)" +
                             (s.bf16_blocks.empty() ? "" : "; " + s.bf16_blocks));
  } else {
    r->fact("bf16 gemm", "none: " + s.bf16_impl);
  }
  const bool bf16_native = s.bf16_impl.find("fallback") == std::string::npos && s.bf16_gflops > 0.0;
  const char* conversions = !active_isa_status().ok() ? "unknown (ZT_ISA is invalid)"
                                                        : f16_conversion_name();
  r->fact("fp16 compute", std::string("f16 storage, GEMMs widened to fp32 (oneDNN 2.6 has no f16 matmul for this CPU); "
                                      "conversions ") + conversions);
  if (!bf16_native) {
    r->warn("bf16.enabled runs its GEMMs on the fp32 fallback here (" + s.bf16_impl +
            "): activation memory halves, but steps are no faster than fp32");
  }
}

void report_gemm(const DoctorOptions& options, Report* r) {
  const GemmPathReport p = gemm_path_report();
  const bool valid = p.selected.ok();
  if (valid) {
    r->fact("gemm path", p.describe);
  } else {
    r->fact("gemm path", "ZT_GEMM is invalid; with ZT_GEMM unset it would be: " + p.describe);
    r->problem(p.selected.message() + "; unset ZT_GEMM (auto) or set it to one of those");
  }
  report_openblas(p, r);
  const std::string cap = env_or("ONEDNN_MAX_CPU_ISA", env_or("DNNL_MAX_CPU_ISA", "").c_str());
  r->fact("onednn", p.onednn_version + ", ISA it will use: " + onednn_isa() +
                        (cap.empty() ? "" : " (capped by MAX_CPU_ISA=" + cap + ")"));
  if (valid) {
    report_gemm_speed(p, options, r);
  } else {
    r->fact("gemm speed", "not measured: ZT_GEMM is invalid");
  }
}

void report_mpi(Report* r) {
  r->fact("mpi", mpi_library_version());
  r->fact("mpi transports", mpi_transports());
}

// Each library's threading and whether a run would oversubscribe the CPUs: more kernel
// threads than CPUs, oneDNN with a pool of its own, nested OpenMP teams (a per-head GEMM in
// a parallel loop would start a team of its own), or a BLAS pool beside OpenMP's.
void report_threads(const CpuInfo& c, const GemmPathReport& p, Report* r) {
  const int kernels = num_threads(), blas = blas_threads();
  const std::string cpus = std::to_string(c.logical_cpus);
  r->fact("threads", "OMP_NUM_THREADS=" + env_or("OMP_NUM_THREADS", "unset") + ", kernels use " +
                         std::to_string(kernels) + " OpenMP threads, OpenBLAS (" + p.blas_threading + " build) " +
                         std::to_string(blas) + (p.blas_shares_openmp ? " of them" : " thread (held: its pool is its own)") +
                         ", oneDNN (" + p.onednn_runtime + " runtime) " +
                         (p.onednn_own_pool ? "its own pool" : "the OpenMP threads") + ", " + cpus + " logical CPUs");
  if (kernels > c.logical_cpus) {
    r->problem(std::to_string(kernels) + " threads on " + cpus + " logical CPUs oversubscribe them (threads wait for " +
               "each other's time slices and GEMMs slow down several-fold): set training.threads or OMP_NUM_THREADS to " +
               cpus + " or less (with R ranks per machine, " + cpus + "/R each)");
  }
  if (!p.blas_shares_openmp && blas > 1) {
    r->problem("OpenBLAS's " + p.blas_threading + " build runs " + std::to_string(blas) + " threads of its own beside " +
               "the " + std::to_string(kernels) + " OpenMP threads: they oversubscribe the CPUs");
  }
  if (p.onednn_own_pool) {
    r->problem("oneDNN's " + p.onednn_runtime + " runtime runs a thread pool of its own beside the OpenMP kernels: " +
               "they oversubscribe the CPUs; use a oneDNN built with OpenMP (Debian's libdnnl2)");
  }
  if (omp_get_max_active_levels() > 1 && kernels > 1) {
    r->problem("nested OpenMP is on (max active levels " + std::to_string(omp_get_max_active_levels()) + "): a GEMM " +
               "inside a parallel loop would start a team of its own; unset OMP_NESTED and OMP_MAX_ACTIVE_LEVELS");
  }
}

// io, memory and disk: returns nothing; the output directory's problems go into r.
void report_storage(const DoctorOptions& options, Report* r) {
  const IoProbe io = probe_io(options.output_dir);
  const std::string where = io.exists ? io.dir : io.dir + " (does not exist yet; probed " + io.probed + ")";
  const std::string odirect =
      io.odirect ? "supported" : (io.writable ? "not supported (" + io.odirect_note + ")" : "not probed");
  r->fact("io", "output dir " + where + ": writable " + yes_no(io.writable) + ", io_uring available " +
                    (io.io_uring ? "yes" : "no (" + io.io_uring_note + ")") + ", O_DIRECT " + odirect);
  if (!io.writable) {
    r->problem("output dir " + io.dir + ": cannot create a file in " + io.probed + " (" + io.write_error +
               "); pass --output-dir with a writable directory or fix its permissions");
  }
  // NVMe offload's slow paths (docs/design/offload.md): named before a run meets them.
  if (!io.io_uring) {
    r->warn("io_uring is unavailable (" + io.io_uring_note + "): NVMe offload would swap through pread/pwrite "
            "threads, one request at a time per thread");
  }
  if (io.writable && !io.odirect) {
    r->warn("O_DIRECT is refused in " + io.probed + " (" + io.odirect_note + "): NVMe offload swap files there would "
            "use buffered I/O through the page cache");
  }
  const MemInfo m = read_meminfo();
  if (!m.known) {
    r->fact("memory", "unknown (no MemTotal/MemAvailable in /proc/meminfo)");
  } else {
    r->fact("memory", format_bytes(static_cast<double>(m.total)) + " total, " +
                          format_bytes(static_cast<double>(m.available)) + " available");
    if (m.available < kGiB) {
      r->problem("only " + format_bytes(static_cast<double>(m.available)) + " of memory is available (< 1 GiB): " +
                 "parameters, gradients, optimizer state and activations must fit; stop other processes or " +
                 "train a smaller model or batch");
    }
  }
  const DiskInfo d = disk_space(io.probed);
  if (!d.known) {
    r->fact("disk", "unknown (statvfs " + io.probed + ": " + d.error + ")");
    return;
  }
  r->fact("disk", format_bytes(static_cast<double>(d.free)) + " free of " +
                      format_bytes(static_cast<double>(d.total)) + " on " + io.probed);
  if (io.writable && d.free < kGiB) {
    r->warn("less than 1 GiB free under " + io.probed + ": checkpoints may not fit; free space or pass " +
            "--output-dir on another filesystem");
  }
}

}  // namespace

int doctor_command(const DoctorOptions& options) {
  Report r;
  std::printf("zerotrain doctor, zerotrain %s\n\n", kZerotrainVersion);
  const CpuInfo c = cpu_info();
  report_cpu(c, &r);
  r.fact("topology", cpu_topology().describe() + "; L2 " + std::to_string(l2_cache_bytes() >> 10) +
                         " KiB a core (the 16-bit kernels' chunk size)");
  report_isa(c, &r);
  report_amx(c, &r);
  report_gemm(options, &r);
  report_mpi(&r);
  report_cuda([&](const char* label, const std::string& text) { r.fact(label, text); },
              [&](std::string text) { r.problem(std::move(text)); });
  r.fact("allocator", allocator_description() + " (malloc of every library in the process)");
  bool thp_slow = false;
  const std::string thp = describe_thp(&thp_slow);
  r.fact("huge pages", thp);
  if (thp_slow) r.warn("transparent huge pages " + thp);
  report_threads(c, gemm_path_report(), &r);
  report_storage(options, &r);
  return r.finish();
}

Command add_doctor_command(CLI::App& app) {
  auto doctor = std::make_shared<DoctorOptions>();
  CLI::App* d = app.add_subcommand("doctor", "Report the machine facts that decide speed and correctness (like ds_report); "
                                             "exit 1 on a problem that will slow or break training");
  d->add_option("--output-dir", doctor->output_dir, "Directory checkpoints would go to (probed for writes, io_uring, O_DIRECT)");
  d->add_option("--gemm-seconds", doctor->gemm_seconds, "Seconds for the GEMM speed probe and again for the FMA peak")
      ->check(CLI::Range(0.0, 60.0));
  return {d, [doctor] { return doctor_command(*doctor); }, false};
}

}  // namespace zt
