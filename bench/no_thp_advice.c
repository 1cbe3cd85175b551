/* The control of bench/huge_pages.sh: preloaded into train_step_bench, it turns every
 * madvise(MADV_HUGEPAGE) into a no-op that reports success, so the same binary runs as it
 * did before zerotrain advised its blocks (core/huge_pages.h). Every other advice passes
 * through to the C library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>

int madvise(void* addr, size_t length, int advice) {
  static int (*real)(void*, size_t, int);
  if (advice == MADV_HUGEPAGE) return 0;
  if (real == NULL) real = (int (*)(void*, size_t, int))dlsym(RTLD_NEXT, "madvise");
  return real(addr, length, advice);
}
