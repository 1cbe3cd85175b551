// The avx512 instantiation of the ISA-templated CPU kernels (see kernels_isa.inc).
#include "kernels/cpu/simd/isa_avx512.h"

#define ZT_KERNEL_NAMESPACE kernels_avx512
#define ZT_KERNEL_ISA_STRUCT IsaAvx512
#define ZT_KERNEL_ISA_ENUM ::zt::Isa::kAvx512
#include "kernels/cpu/kernels_isa.inc"
