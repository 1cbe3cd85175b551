// Chooses the KernelTable for the running CPU.
#include "kernels/cpu/kernel_table.h"

#include "core/check.h"

namespace zt {

const KernelTable& cpu_kernels_for(Isa isa) {
  ZT_CHECK(static_cast<int>(isa) <= static_cast<int>(detect_isa()), "ISA %s is not supported by this CPU",
           isa_name(isa));
  switch (isa) {
    case Isa::kScalar: return kernels_scalar::kTable;
    case Isa::kAvx2: return kernels_avx2::kTable;
    case Isa::kAvx512: return kernels_avx512::kTable;
  }
  return kernels_scalar::kTable;
}

const KernelTable& cpu_kernels() {
  static const KernelTable& table = cpu_kernels_for(active_isa());
  return table;
}

}  // namespace zt
