// flash_forward.cu built for the CPU emulation (cuda_keywords.h, emulated_kernels.h).
#include "kernels/cuda/emulation/cuda_keywords.h"
// Separated, so the formatter keeps cuda_keywords.h first.
#include "kernels/cuda/flash_forward.cu"
