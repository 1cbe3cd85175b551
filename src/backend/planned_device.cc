// The planned device (planned_device.h).
#include "backend/planned_device.h"

#include <string>

namespace zt {

namespace {

class PlannedDevice final : public Backend {
 public:
  PlannedDevice(Device device, DType compute) : device_(device), compute_(compute) {}
  Device device() const override { return device_; }
  DType compute_dtype() const override { return compute_; }
  bool host() const override { return false; }
  const KernelOps& ops() const override { return ops_; }
  std::string describe() const override {
    return std::string(device_name(device_)) + " " + dtype_name(compute_) + " (planned: no device opened)";
  }
  StatusOr<Arena> allocate(size_t, DType, const char* what) const override {
    return Status::FailedPrecondition(std::string("a planned ") + device_name(device_) + " device allocates nothing (" +
                                      what + "): estimate and plan describe a run; train opens the device");
  }
  void copy(void*, const void*, size_t) const override {}
  void zero(void*, size_t) const override {}

 protected:
  void release(void*, size_t) const override {}

 private:
  Device device_;
  DType compute_;
  KernelOps ops_{};
};

}  // namespace

const Backend& planned_device(Device device, DType compute) {
  ZT_CHECK(device == Device::kCuda, "only cuda is planned");
  static const PlannedDevice f32(Device::kCuda, DType::kF32), bf16(Device::kCuda, DType::kBF16),
      f16(Device::kCuda, DType::kF16);
  return compute == DType::kBF16 ? bf16 : compute == DType::kF16 ? f16 : f32;
}

}  // namespace zt
