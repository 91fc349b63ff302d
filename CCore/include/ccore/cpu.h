#ifndef CCORE_CPU_H
#define CCORE_CPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Instruction-set extensions the pixel kernels can use. The scalar path is always built.
enum {
    CCORE_CPU_SSE2 = 1u << 0,  ///< x86-64 baseline
    CCORE_CPU_SSSE3 = 1u << 1, ///< x86-64, byte shuffles
    CCORE_CPU_AVX2 = 1u << 2,  ///< x86-64, 256-bit integer
    CCORE_CPU_NEON = 1u << 3,  ///< aarch64 baseline
};

/// Extensions detected on this CPU, restricted by the mask of ccore_cpu_set_mask.
uint32_t ccore_cpu_features(void);

/// Restricts the kernels to the extensions in `mask` (0 forces the scalar path). For tests and
/// benchmarks; thread-safe; takes effect on the next call into a transform.
void ccore_cpu_set_mask(uint32_t mask);

#ifdef __cplusplus
}
#endif
#endif
