#ifndef CCORE_H
#define CCORE_H

// CCore: the C half of rtcshare. A capped arena, slot pools, refcounted frames and SPSC rings so
// every byte is fixed at start-up; pixel and sample transforms that never allocate. No
// dependency beyond libc.

#include "ccore/status.h"
#include "ccore/cpu.h"
#include "ccore/arena.h"
#include "ccore/pool.h"
#include "ccore/image.h"
#include "ccore/ring.h"
#include "ccore/frame.h"
#include "ccore/yuv.h"
#include "ccore/pcm.h"
#include "ccore/reclaim.h"
#include "ccore/codepages.h"
#include "ccore/change.h"

#endif
