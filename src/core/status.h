// Status and StatusOr: errors as values (leveldb / abseil style).
//
// A Status is OK or carries a code and a message that names the file, key, rank or
// value involved and says what to do. Functions that can fail for reasons outside the
// program (config, files, peers, memory) return [[nodiscard]] Status or StatusOr<T>.
// Internal invariants use ZT_CHECK (core/check.h) instead.
// Thread-safety: values; distinct objects may be used from distinct threads.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "core/check.h"

namespace zt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad config value, bad flag, inconsistent sizes
  kNotFound,         // missing file or key
  kCorruption,       // a file's bytes contradict its format
  kIOError,          // the OS refused a read or write
  kUnimplemented,    // a feature or combination zerotrain does not support
  kFailedPrecondition,
  kDeadlineExceeded,
  kResourceExhausted,  // memory (or another finite resource) ran out
  kInternal,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status Unimplemented(std::string msg) { return {StatusCode::kUnimplemented, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) { return {StatusCode::kFailedPrecondition, std::move(msg)}; }
  static Status DeadlineExceeded(std::string msg) { return {StatusCode::kDeadlineExceeded, std::move(msg)}; }
  static Status ResourceExhausted(std::string msg) { return {StatusCode::kResourceExhausted, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>", or "OK".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds a T or a non-OK Status. Accessing value() of an error aborts.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    ZT_CHECK(!std::get<Status>(v_).ok(), "StatusOr built from an OK Status without a value");
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }
  T& value() & {
    ZT_CHECK(ok(), "value() of an error StatusOr: %s", std::get<Status>(v_).to_string().c_str());
    return std::get<T>(v_);
  }
  const T& value() const& {
    ZT_CHECK(ok(), "value() of an error StatusOr: %s", std::get<Status>(v_).to_string().c_str());
    return std::get<T>(v_);
  }
  T&& value() && {
    ZT_CHECK(ok(), "value() of an error StatusOr: %s", std::get<Status>(v_).to_string().c_str());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace zt

#define ZT_STATUS_CONCAT_INNER(a, b) a##b
#define ZT_STATUS_CONCAT(a, b) ZT_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define ZT_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::zt::Status zt_status_ = (expr);       \
    if (!zt_status_.ok()) return zt_status_; \
  } while (0)

// `ZT_ASSIGN_OR_RETURN(auto x, f());` declares x from f()'s value or returns its Status.
#define ZT_ASSIGN_OR_RETURN(lhs, expr) \
  ZT_ASSIGN_OR_RETURN_IMPL(ZT_STATUS_CONCAT(zt_statusor_, __LINE__), lhs, expr)
#define ZT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
