// The avx2 instantiation of the ISA-templated CPU kernels (see kernels_isa.inc).
#include "kernels/cpu/simd/isa_avx2.h"

#define ZT_KERNEL_NAMESPACE kernels_avx2
#define ZT_KERNEL_ISA_STRUCT IsaAvx2
#define ZT_KERNEL_ISA_ENUM ::zt::Isa::kAvx2
#include "kernels/cpu/kernels_isa.inc"
