// CSV writer with a single header across resumes.
#include "cli/metrics_csv.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "io/atomic_file.h"

namespace zt {

std::string MetricsCsv::header(bool moe) {
  return std::string("step,loss,val_loss,lr,grad_norm,tokens_per_s,forward_ms,backward_ms,optimizer_ms,") +
         (moe ? "moe_aux_loss,moe_dropped,moe_imbalance," : "") + "loss_hex";
}

namespace {

// The text after the leading "# ..." lines.
size_t skip_comments(const std::string& s) {
  size_t pos = 0;
  while (pos < s.size() && s[pos] == '#') {
    const size_t nl = s.find('\n', pos);
    pos = nl == std::string::npos ? s.size() : nl + 1;
  }
  return pos;
}

}  // namespace

StatusOr<MetricsCsv> MetricsCsv::open(const std::string& path, bool append, int64_t resume_step,
                                      const std::string& about, bool moe) {
  const std::string head = header(moe);
  bool need_header = true;
  if (append) {
    auto existing = read_file(path);
    if (existing.ok() && !existing->empty()) {
      const size_t body = skip_comments(*existing);
      if (existing->compare(body, head.size() + 1, head + "\n") != 0) {
        return Status::InvalidArgument(path + ": existing metrics file has a different header; move it away");
      }
      need_header = false;
      // Rows past the checkpoint belong to the lost part of the run: drop them.
      std::string kept;
      size_t pos = 0;
      while (pos < existing->size()) {
        size_t nl = existing->find('\n', pos);
        nl = nl == std::string::npos ? existing->size() : nl + 1;
        const std::string line = existing->substr(pos, nl - pos);
        if (pos <= body || line[0] == '#' || std::strtoll(line.c_str(), nullptr, 10) <= resume_step) kept += line;
        pos = nl;
      }
      if (kept.size() != existing->size()) ZT_RETURN_IF_ERROR(write_file_atomic(path, kept));
    }
  }
  MetricsCsv m;
  m.f_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (m.f_ == nullptr) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  if (!about.empty()) {
    if (need_header) {
      std::fprintf(m.f_, "# %s\n", about.c_str());
    } else {
      std::fprintf(m.f_, "# resumed after step %lld: %s\n", static_cast<long long>(resume_step), about.c_str());
    }
  }
  if (need_header) std::fprintf(m.f_, "%s\n", head.c_str());
  m.moe_ = moe;
  std::fflush(m.f_);
  return m;
}

MetricsCsv::MetricsCsv(MetricsCsv&& other) noexcept : f_(std::exchange(other.f_, nullptr)), moe_(other.moe_) {}

MetricsCsv& MetricsCsv::operator=(MetricsCsv&& other) noexcept {
  if (this != &other) {
    if (f_ != nullptr) std::fclose(f_);
    f_ = std::exchange(other.f_, nullptr);
    moe_ = other.moe_;
  }
  return *this;
}

MetricsCsv::~MetricsCsv() {
  if (f_ != nullptr) std::fclose(f_);
}

void MetricsCsv::write(const MetricsRow& r) {
  char val[32] = "";
  if (r.val_loss) std::snprintf(val, sizeof(val), "%.6f", *r.val_loss);
  std::fprintf(f_, "%lld,%.6f,%s,%.6e,%.17g,%.1f,%.2f,%.2f,%.2f,", static_cast<long long>(r.step), r.loss, val, r.lr,
               r.grad_norm, r.tokens_per_s, r.forward_ms, r.backward_ms, r.optimizer_ms);
  if (moe_) std::fprintf(f_, "%.6e,%lld,%.4f,", r.moe_aux_loss, static_cast<long long>(r.moe_dropped), r.moe_imbalance);
  std::fprintf(f_, "%a\n", r.loss);
  std::fflush(f_);
}

}  // namespace zt
