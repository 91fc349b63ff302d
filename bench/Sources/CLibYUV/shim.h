// libyuv, the reference the benchmarks compare against (Debian: libyuv-dev).
#include <libyuv.h>
