// The scalar instantiation of the ISA-templated CPU kernels (see kernels_isa.inc).
#include "kernels/cpu/simd/isa_scalar.h"

#define ZT_KERNEL_NAMESPACE kernels_scalar
#define ZT_KERNEL_ISA_STRUCT IsaScalar
#define ZT_KERNEL_ISA_ENUM ::zt::Isa::kScalar
#include "kernels/cpu/kernels_isa.inc"
