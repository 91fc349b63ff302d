"""What the viewer got, against what was fed: every decoded frame matched to its source frame by
the frame marker (DESIGN.md, "The test source and its frame marker"), and the picture on the
viewer's screen at each source frame's time.

Runs under an interpreter with numpy and scipy (Debian's python3-numpy and python3-scipy, which
bench/run installs with apt when it can); the clips are YUV4MPEG2 4:2:0 files whose frames all
start with a bare "FRAME\\n" (ours, ffmpeg's and the receiver's), read through a memory map.

    python3 quality.py SOURCE.y4m RECEIVED.y4m [FED_TIMES.json RECEIVED_TIMES.json [FED_FRAMES]] > figures.json

Figures:
- matched: each decoded frame whose marker names a source frame, against that frame: PSNR-Y
  (dB, 100 for identical planes) and SSIM-Y (8x8 uniform windows, the usual constants; the mean
  over the picture; one matched frame in SSIM_EVERY), each as the mean over the matched frames;
- viewer: with the feed and receive times (CLOCK_MONOTONIC, seconds), at each source frame's
  feed time plus the playout allowance PLAYOUT_S, the newest frame decoded by then that is not
  from later than that source frame is what the viewer sees (a playout buffer); its PSNR-Y
  against that source frame, per source frame, so frames that came late, never came or froze on
  screen count as what they showed; viewer_frames_on_time counts the source frames shown as
  themselves. Before the first decoded frame the
  screen is black (Y 16). Also how long after its feed each source frame was first on screen
  (delay_ms_p50, _p95);
- frames_shown: the source frames fed whose picture reached the viewer at all. A frame identical
  to its predecessor (same marker, same bytes: a still screen) is shown by the frame before it,
  so a sender that does not send it again (zero-hertz) has not dropped it. A marker repeated
  over pictures that differ (a clip's recording noise) names them all: the picture ranked n-th
  under one marker counts as shown once n frames with that marker were decoded.
"""
import json
import sys

import numpy as np
from scipy.ndimage import uniform_filter

# A receiver plays frames out a little after they are captured; 100 ms is the latency target's
# p99, so a sender within its latency budget shows each frame at its source frame's time.
PLAYOUT_S = 0.100
MARKER_BITS, MARKER_W, MARKER_H = 32, 8, 16
SSIM_WINDOW = 8
# SSIM of one matched frame in three: it costs ten times PSNR, and neighbouring frames differ little.
SSIM_EVERY = 3
_C1, _C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


class Y4M:
    """The luma planes of a YUV4MPEG2 file, by index, without reading the whole file."""

    def __init__(self, path):
        with open(path, "rb") as f:
            header = f.readline()
        if not header.startswith(b"YUV4MPEG2 "):
            raise ValueError(f"{path}: not YUV4MPEG2")
        fields = {p[:1]: p[1:] for p in header.split()[1:]}
        self.width, self.height = int(fields[b"W"]), int(fields[b"H"])
        self.frame_bytes = self.width * self.height * 3 // 2
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        self.first = len(header)
        self.stride = len(b"FRAME\n") + self.frame_bytes
        self.count = (len(self.data) - self.first) // self.stride

    def _start(self, i):
        start = self.first + i * self.stride + len(b"FRAME\n")
        if bytes(self.data[start - 6:start]) != b"FRAME\n":
            raise ValueError(f"frame {i}: a FRAME line with parameters is not supported")
        return start

    def luma(self, i):
        start = self._start(i)
        return self.data[start:start + self.width * self.height].reshape(self.height, self.width)

    def same_as_previous(self, i):
        """Whether frame i's three planes are byte for byte frame i-1's."""
        if i == 0:
            return False
        a, b = self._start(i), self._start(i - 1)
        return np.array_equal(self.data[a:a + self.frame_bytes], self.data[b:b + self.frame_bytes])


def marker(y):
    """The frame counter stamped in the top-left, or None if a block is ambiguous (as
    FrameMarker.read: the inner 6x12 of each block, mean luma within 40 of 128 is ambiguous)."""
    if y.shape[0] < 2 * MARKER_H or y.shape[1] < MARKER_BITS * MARKER_W:
        return None
    band = y[2:MARKER_H - 2, :MARKER_BITS * MARKER_W].astype(np.int32)
    means = band.reshape(MARKER_H - 4, MARKER_BITS, MARKER_W)[:, :, 1:MARKER_W - 1].mean(axis=(0, 2))
    if np.any(np.abs(means - 128) < 40):
        return None
    value = 0
    for bit in means > 128:
        value = value << 1 | int(bit)
    return value


def psnr(a, b):
    diff = a.astype(np.int32) - b.astype(np.int32)
    mse = float(np.mean(diff * diff))
    return 100.0 if mse == 0 else min(100.0, 10 * np.log10(255 * 255 / mse))


def ssim(a, b):
    a, b = a.astype(np.float32), b.astype(np.float32)
    mu_a, mu_b = uniform_filter(a, SSIM_WINDOW), uniform_filter(b, SSIM_WINDOW)
    var_a = uniform_filter(a * a, SSIM_WINDOW) - mu_a * mu_a
    var_b = uniform_filter(b * b, SSIM_WINDOW) - mu_b * mu_b
    cov = uniform_filter(a * b, SSIM_WINDOW) - mu_a * mu_b
    s = ((2 * mu_a * mu_b + _C1) * (2 * cov + _C2)) / ((mu_a * mu_a + mu_b * mu_b + _C1) * (var_a + var_b + _C2))
    return float(s.mean())


def source_index(source):
    """marker -> source frame index (the first frame carrying it); each source frame's first
    frame with its marker (itself unless it repeats the one before, or its marker is
    unreadable); and each frame's rank among the pictures under its marker (1 for the first,
    up by one for each frame whose bytes differ from its predecessor's)."""
    index, first, rank, pictures = {}, [], [], {}
    for i in range(source.count):
        m = marker(source.luma(i))
        if m is not None and m not in index:
            index[m] = i
        first.append(index.get(m, i))
        if first[i] == i:
            rank.append(1)
        elif first[i - 1] == first[i] and source.same_as_previous(i):
            rank.append(rank[i - 1])
        else:
            rank.append(pictures[first[i]] + 1)
        pictures[first[i]] = max(pictures.get(first[i], 0), rank[i])
    return index, first, rank


def frames_shown(matched_src, first, rank, fed):
    """How many of the first `fed` source frames reached the viewer's screen: a decoded frame
    carries their picture (see the module's note on frames_shown)."""
    decoded = {}
    for i in matched_src:
        if i is not None:
            decoded[i] = decoded.get(i, 0) + 1
    return sum(1 for i in range(fed) if decoded.get(first[i], 0) >= rank[i])


def _mean(values):
    return round(float(np.mean(values)), 3) if len(values) else None


def _percentile(values, q):
    return round(float(np.percentile(values, q)), 3) if len(values) else None


def compare(source_path, received_path, fed_times=None, received_times=None, fed_count=None):
    source, received = Y4M(source_path), Y4M(received_path)
    if (source.width, source.height) != (received.width, received.height):
        raise ValueError(f"sizes differ: {source.width}x{source.height} fed, {received.width}x{received.height} received")
    index, first, rank = source_index(source)
    fed = min(fed_count or source.count, source.count)
    matched_src, psnrs, ssims = [], [], []
    for j in range(received.count):
        m = marker(received.luma(j))
        i = index.get(m)
        matched_src.append(i)
        if i is None:
            continue
        y = received.luma(j)
        psnrs.append(psnr(y, source.luma(i)))
        if len(psnrs) % SSIM_EVERY == 1 or SSIM_EVERY == 1:
            ssims.append(ssim(y, source.luma(i)))
    out = {"frames_fed": fed, "frames_decoded": received.count,
           "frames_matched": len(psnrs), "distinct_frames_matched": len({i for i in matched_src if i is not None}),
           "frames_shown": frames_shown(matched_src, first, rank, fed),
           "psnr_y": _mean(psnrs), "psnr_y_p5": _percentile(psnrs, 5), "ssim_y": _mean(ssims),
           "ssim_y_p5": _percentile(ssims, 5)}
    if fed_times is not None and received_times is not None:
        out.update(viewer(source, received, matched_src, first, fed_times[:fed], received_times[:received.count]))
    return out


def viewer(source, received, matched_src, first, fed_times, received_times):
    """The viewer's picture at each source frame's time: a receiver plays frames out PLAYOUT_S
    after their source frame, so at source frame i's feed time + PLAYOUT_S the screen shows the
    newest frame that has come by then and is not from later than i (frames are shown in
    order; one that has not come leaves the one before on screen)."""
    black = np.full((source.height, source.width), 16, dtype=np.uint8)
    shown, cache = [], {}
    arrived = []  # (source index, received index) of frames decoded by the deadline
    k = 0
    on_time = 0
    for i, fed_at in enumerate(fed_times):
        deadline = fed_at + PLAYOUT_S
        while k < len(received_times) and received_times[k] <= deadline:
            if matched_src[k] is not None:
                arrived.append((matched_src[k], k))
            k += 1
        best = max(((src, j) for src, j in arrived if src <= i), default=None)
        j = best[1] if best else -1
        if best and best[0] == first[i]:
            on_time += 1
        key = (i, j)
        if key not in cache:
            cache[key] = psnr(received.luma(j) if j >= 0 else black, source.luma(i))
        shown.append(cache[key])
    # How long after it was fed each source frame was first on screen.
    delays, seen = [], set()
    for j, i in enumerate(matched_src[:len(received_times)]):
        if i is not None and i not in seen and i < len(fed_times):
            seen.add(i)
            delays.append((received_times[j] - fed_times[i]) * 1000)
    # One figure a second of media: the quality over time.
    per_second = [round(float(np.mean(shown[k:k + 30])), 2) for k in range(0, len(shown), 30)]
    return {"viewer_psnr_y": _mean(shown), "viewer_psnr_y_p5": _percentile(shown, 5),
            "viewer_frames_on_time": on_time, "viewer_psnr_y_per_second": per_second,
            "delay_ms_p50": _percentile(delays, 50), "delay_ms_p95": _percentile(delays, 95),
            "playout_ms": int(PLAYOUT_S * 1000)}


def main():
    args = sys.argv[1:]
    times = [None, None]
    if len(args) >= 4:
        for k, path in enumerate(args[2:4]):
            with open(path) as f:
                times[k] = json.load(f)
    fed_count = int(args[4]) if len(args) >= 5 else (len(times[0]) if times[0] is not None else None)
    print(json.dumps(compare(args[0], args[1], times[0], times[1], fed_count)))


if __name__ == "__main__":
    main()
