#include "internal.h"

const char *ccore_status_string(ccore_status status) {
    switch (status) {
    case CCORE_OK: return "ok";
    case CCORE_DROPPED_OLDEST: return "pushed; oldest entry dropped";
    case CCORE_ERR_INVALID: return "invalid argument";
    case CCORE_ERR_NO_MEMORY: return "memory cap reached";
    case CCORE_ERR_EXHAUSTED: return "pool exhausted";
    case CCORE_ERR_FULL: return "ring full";
    case CCORE_ERR_EMPTY: return "ring empty";
    case CCORE_ERR_BUSY: return "still in use";
    case CCORE_ERR_TOO_SMALL: return "buffer too small";
    }
    return "unknown status";
}
