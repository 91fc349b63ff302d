"""VP8 error-resilient mode and token partitions, A/B in libvpx itself: deterministic, so a loaded
machine changes the CPU column only.

Each clip of bench/.build/inputs (made by bench/run) is encoded by ffmpeg's libvpx wrapper with
the VP8 settings of harness/senders.py (realtime, cpu-used -6, CBR, a keyframe every 90 frames),
as fast as it goes rather than paced, in four variants: (a) error resilient, 4 partitions
(rtcshare's defaults); (b) not resilient, 4; (c) not resilient, 1 (libvpx's defaults); (d)
resilient, 1. Printed per case: bytes, frames, PSNR-Y of the decoded stream against the clip, CPU.

Then what each variant does to a receiver that decodes on past a frame lost for good (GStreamer's
rtpvp8depay by default; libwebrtc, ffmpeg's depacketizer and `rtcshare receive` wait for a
keyframe instead): one inter frame at a time is taken out of the stream, the rest decoded, and
every frame up to the next keyframe compared with the intact stream's decode (median and worst
PSNR-Y; 99 = identical), and the frames from that keyframe on (recovered: 99).

    python3 bench/harness/vp8_resilience_ab.py [busy:2500 screen:2500 desktop:800]"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "..", ".build", "inputs")
W, H = 1280, 720
VARIANTS = {"a": (True, 4), "b": (False, 4), "c": (False, 1), "d": (True, 1)}
DROPS = (20, 45, 60)


def encode(clip, kbps, resilient, partitions, out):
    k = kbps
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", clip, "-an", "-c:v", "libvpx",
           "-deadline", "realtime", "-cpu-used", "-6", "-threads", "1", "-lag-in-frames", "0", "-auto-alt-ref", "0",
           "-static-thresh", "100", "-noise-sensitivity", "0", "-undershoot-pct", "100", "-overshoot-pct", "15",
           "-b:v", f"{k}k", "-minrate", f"{k}k", "-maxrate", f"{k}k", "-bufsize", f"{k}k",
           "-rc_init_occupancy", f"{k // 2}k", "-qmin", "2", "-qmax", "56", "-drop-threshold", "30",
           "-max-intra-rate", "900", "-g", "90"]
    if resilient:
        cmd += ["-error-resilient", "default"]
    if partitions > 1:
        cmd += ["-slices", str(partitions)]  # libvpxenc: token partitions = log2(slices)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd + [out], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def ivf_frames(path):
    data = open(path, "rb").read()
    frames, off = [], 32
    while off + 12 <= len(data):
        size = struct.unpack_from("<I", data, off)[0]
        frames.append(data[off:off + 12 + size])
        off += 12 + size
    return data[:32], frames


def decode_luma(ivf_bytes):
    out = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "ivf", "-i", "-", "-fps_mode",
                          "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
                         input=ivf_bytes, capture_output=True, check=True).stdout
    return np.frombuffer(out, dtype=np.uint8).reshape(-1, W * H * 3 // 2)[:, :W * H].astype(np.float64)


def psnr(a, b):
    mse = np.mean((a - b) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255 ** 2 / mse)


def clip_psnr(ivf, clip):
    err = subprocess.run(["ffmpeg", "-hide_banner", "-i", ivf, "-i", clip, "-lavfi", "[0:v][1:v]psnr", "-f", "null",
                          "-"], capture_output=True, text=True).stderr
    line = [l for l in err.splitlines() if "PSNR y:" in l][-1]
    return float(line.split("PSNR y:")[1].split()[0])


def lost_frame(path):
    hdr, frames = ivf_frames(path)
    inter = [bool(f[12] & 1) for f in frames]
    keys = [i for i, x in enumerate(inter) if not x]
    intact = decode_luma(hdr + b"".join(frames))
    rows = []
    for want in DROPS:
        drop = next(i for i in range(want, len(frames)) if inter[i])
        nk = next((k for k in keys if k > drop), len(frames))
        damaged = decode_luma(hdr + b"".join(f for i, f in enumerate(frames) if i != drop))
        between = [psnr(intact[j + 1], damaged[j]) for j in range(drop, nk - 1)]
        after = [psnr(intact[j + 1], damaged[j]) for j in range(nk - 1, len(damaged))]
        rows.append(f"drop {drop}: to keyframe {nk} median {np.median(between):.1f} worst {min(between):.1f}, "
                    f"after {min(after) if after else float('nan'):.1f}")
    return rows


def main():
    cases = [(c.split(":")[0], int(c.split(":")[1])) for c in (sys.argv[1:] or ["busy:2500", "screen:2500",
                                                                                  "desktop:800"])]
    with tempfile.TemporaryDirectory() as work:
        for name, kbps in cases:
            clip = os.path.join(INPUTS, f"{name}.y4m")
            if not os.path.exists(clip):
                sys.exit(f"vp8_resilience_ab: {clip} is missing (bench/run makes it)")
            for v, (resilient, partitions) in VARIANTS.items():
                out = os.path.join(work, f"{name}-{v}.ivf")
                cpu = encode(clip, kbps, resilient, partitions, out)
                _, frames = ivf_frames(out)
                print(f"{name} {kbps} kbit/s ({v}) resilient {int(resilient)} partitions {partitions}: "
                      f"{os.path.getsize(out)} bytes, {len(frames)} frames, PSNR-Y {clip_psnr(out, clip):.3f} dB, "
                      f"CPU {cpu:.2f} s", flush=True)
                if name != "desktop":
                    for row in lost_frame(out):
                        print("    lost for good, " + row, flush=True)


if __name__ == "__main__":
    main()
