// Shared by CCore's own sources only (not installed): small helpers and the kernel-ISA switches.
#ifndef CCORE_INTERNAL_H
#define CCORE_INTERNAL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "CCore.h"

#if defined(__x86_64__) || defined(_M_X64)
#define CCORE_X86 1
#define CCORE_TARGET_SSSE3 __attribute__((target("ssse3")))
#define CCORE_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define CCORE_X86 0
#endif

#if defined(__aarch64__)
#define CCORE_ARM64 1
#else
#define CCORE_ARM64 0
#endif

#define CCORE_LIKELY(x) __builtin_expect(!!(x), 1)
#define CCORE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CCORE_CACHE_LINE 64

static inline size_t ccore_align_up(size_t value, size_t align) {
    return (value + align - 1) & ~(align - 1);
}

static inline int ccore_is_pow2(size_t value) { return value && !(value & (value - 1)); }

/// Whether the current feature mask allows `feature` (one CCORE_CPU_* bit).
static inline int ccore_cpu_has(uint32_t feature) { return (ccore_cpu_features() & feature) != 0; }

#endif
