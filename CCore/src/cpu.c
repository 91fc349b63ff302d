// Run-time CPU feature detection for kernel dispatch. Detection runs once; the mask lets tests
// and benchmarks force a narrower path (CCORE_CPU_MASK in the environment does the same, read
// once at first use, so a whole process can be run on the scalar path).
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

#define CCORE_CPU_UNSET 0x80000000u

static _Atomic uint32_t detected = CCORE_CPU_UNSET;
static _Atomic uint32_t allowed = CCORE_CPU_UNSET;

static uint32_t detect(void) {
    uint32_t f = 0;
#if CCORE_X86
    __builtin_cpu_init();
    f |= CCORE_CPU_SSE2; // part of x86-64
    if (__builtin_cpu_supports("ssse3")) f |= CCORE_CPU_SSSE3;
    if (__builtin_cpu_supports("avx2")) f |= CCORE_CPU_AVX2;
#elif CCORE_ARM64
    f |= CCORE_CPU_NEON; // part of AArch64
#endif
    return f;
}

uint32_t ccore_cpu_features(void) {
    uint32_t d = atomic_load_explicit(&detected, memory_order_relaxed);
    uint32_t a = atomic_load_explicit(&allowed, memory_order_relaxed);
    if (CCORE_UNLIKELY(d == CCORE_CPU_UNSET || a == CCORE_CPU_UNSET)) {
        d = detect();
        atomic_store_explicit(&detected, d, memory_order_relaxed);
        if (a == CCORE_CPU_UNSET) {
            const char *env = getenv("CCORE_CPU_MASK");
            uint32_t mask = env ? (uint32_t)strtoul(env, NULL, 0) : 0xffffffffu;
            uint32_t expected = CCORE_CPU_UNSET;
            atomic_compare_exchange_strong(&allowed, &expected, mask & ~CCORE_CPU_UNSET);
            a = atomic_load_explicit(&allowed, memory_order_relaxed);
        }
    }
    return d & a;
}

void ccore_cpu_set_mask(uint32_t mask) {
    atomic_store_explicit(&allowed, mask & ~CCORE_CPU_UNSET, memory_order_relaxed);
}
