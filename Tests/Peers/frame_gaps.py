"""Freezes seen by a test peer: the gaps between two decoded video frames.

`FrameGaps.frame()` is called for each decoded frame; `summary()` gives the longest gap (ms)
and each gap over 200 ms as [seconds after the first frame, gap ms] (the first 100)."""
import time


class FrameGaps:
    def __init__(self):
        self.first = None
        self.last = None
        self.longest_ms = None
        self.over_200ms = []

    def frame(self, now=None):
        now = time.monotonic() if now is None else now
        if self.last is not None:
            gap = round((now - self.last) * 1000, 1)
            self.longest_ms = max(self.longest_ms or 0, gap)
            if gap > 200 and len(self.over_200ms) < 100:
                self.over_200ms.append([round(now - self.first, 2), gap])
        if self.first is None:
            self.first = now
        self.last = now

    def summary(self):
        return {"longest_gap_ms": self.longest_ms, "gaps_over_200ms": self.over_200ms}
