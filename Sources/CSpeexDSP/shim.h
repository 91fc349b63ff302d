// libspeexdsp's resampler, for converting app audio at any common rate to Opus's 48 kHz.
// Its calls are plain functions (no varargs, no macros), so Swift calls them directly.
#include <speex/speex_resampler.h>
// libspeexdsp mallocs its state (the caller cannot place it); glibc's mallinfo2 is how the
// tests measure that figure for the memory plan. Swift's Glibc module does not export it.
#include <malloc.h>
