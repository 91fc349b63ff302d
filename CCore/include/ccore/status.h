#ifndef CCORE_STATUS_H
#define CCORE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/// Result of every CCore call that can fail. 0 is success; nothing in CCore aborts on bad input.
typedef enum ccore_status {
    CCORE_OK = 0,              ///< done
    CCORE_DROPPED_OLDEST = 1,  ///< pushed, but the ring was full and gave back its oldest entry
    CCORE_ERR_INVALID = -1,    ///< an argument is out of range or inconsistent (checked, never asserted)
    CCORE_ERR_NO_MEMORY = -2,  ///< the arena's hard cap would be exceeded
    CCORE_ERR_EXHAUSTED = -3,  ///< every slot of a pool is in use
    CCORE_ERR_FULL = -4,       ///< ring full and its policy rejects the newest entry
    CCORE_ERR_EMPTY = -5,      ///< nothing to pop
    CCORE_ERR_BUSY = -6,       ///< the object still has users (slots out, entries queued)
    CCORE_ERR_TOO_SMALL = -7,  ///< a caller-given buffer is smaller than the operation needs
} ccore_status;

/// A short, static, human-readable description of a status.
const char *ccore_status_string(ccore_status status);

#ifdef __cplusplus
}
#endif
#endif
