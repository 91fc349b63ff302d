"""What a sender makes of a 1080p screen of dense text: fullhd_case's text pages, each held
`--hold` seconds, as a Y4M file shared to an IVF file (no transport); each decoded picture's
PSNR-Y against the page it shows (the best-matching one: pages are held still), its size and
the sender's own peak RSS.

    python3 bench/harness/text_quality.py BINARY [--codec h264|vp8] [--bitrate 1500] [--hold 3]

Prints one JSON object: pictures decoded, bytes, PSNR-Y mean and minimum (and when the worst
picture was shown, from the first frame), keyframes and the peak RSS line of the sender's summary. Then what a viewer
sees over time: frames coded, of which hidden (VP8's show_frame 0: decoded into the references,
no picture), and at each coded frame's time the picture on screen (the last one shown by then):
its PSNR-Y mean and minimum, and how long the screen stayed blank at the start."""
import argparse
import json
import os
import re
import subprocess
import tempfile

import numpy as np

from fullhd_case import PAGES, make_pages

SIZE = (1920, 1080)


def luma_pages(work):
    w, h = SIZE
    pages = []
    for i in range(PAGES):
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(work, f"page{i}.png"), "-vf", "format=yuv420p",
                              "-f", "rawvideo", "-"], capture_output=True, check=True).stdout
        pages.append(np.frombuffer(raw[:w * h], np.uint8).astype(np.float32).reshape(h, w))
    return pages


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--codec", default="h264")
    p.add_argument("--bitrate", type=int, default=1500)
    p.add_argument("--hold", type=int, default=3, help="seconds each page is held")
    p.add_argument("--fps", type=int, default=15)
    args = p.parse_args()
    w, h = SIZE
    with tempfile.TemporaryDirectory() as work:
        make_pages(work, f"{w}x{h}")
        clip, out = os.path.join(work, "text.y4m"), os.path.join(work, "out.ivf")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-framerate", f"1/{args.hold}", "-i", os.path.join(work, "page%d.png"),
                        "-vf", f"fps={args.fps},format=yuv420p", "-frames:v", str(PAGES * args.hold * args.fps), clip],
                       check=True)
        run = subprocess.run([args.binary, "--source", f"y4m:{clip}", "--size", f"{w}x{h}", "--fps", str(args.fps),
                              "--codec", args.codec, "--bitrate", str(args.bitrate), "--output", out,
                              "--mem-cap", "100M"], capture_output=True, text=True)
        summary = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
        pages = luma_pages(work)
        # I420 as coded (not gray: that would rescale the studio-range luma).
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", out, "-fps_mode", "passthrough", "-f", "rawvideo",
                              "-pix_fmt", "yuv420p", "-"], capture_output=True, check=True).stdout
        # Times of the frames coded and of the pictures shown (ffprobe lists decoded pictures only).
        def times(entry):
            listed = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", f"{entry}=pts_time",
                                     "-of", "csv=p=0", out], capture_output=True, text=True, check=True).stdout
            return [float(t) for t in listed.split() if t and t != "N/A"]
        coded, shown = times("packet"), times("frame")
        frame = w * h * 3 // 2
        psnr = []
        for k in range(len(raw) // frame):
            y = np.frombuffer(raw[k * frame:k * frame + w * h], np.uint8).astype(np.float32).reshape(h, w)
            psnr.append(max(10 * np.log10(255 ** 2 / max(float(np.mean((y - page) ** 2)), 1e-9)) for page in pages))
        # The viewer's screen at each coded frame's time: the last picture shown by then.
        screen, k = [], -1
        for t in coded:
            while k + 1 < min(len(shown), len(psnr)) and shown[k + 1] <= t + 1e-6:
                k += 1
            screen.append(psnr[k] if k >= 0 else None)
        seen = [p for p in screen if p is not None]
        worst = int(np.argmin(psnr)) if psnr else None
        keyframes = re.search(r"(\d+) keyframes", summary)
        peak = re.search(r"peak RSS ([0-9.]+ MiB)", summary)
        print(json.dumps({"codec": args.codec, "bitrate_kbps": args.bitrate, "exit": run.returncode,
                          "pictures": len(psnr), "bytes": os.path.getsize(out),
                          "keyframes": int(keyframes.group(1)) if keyframes else None,
                          "psnr_y_mean": round(float(np.mean(psnr)), 2) if psnr else None,
                          "psnr_y_min": round(float(np.min(psnr)), 2) if psnr else None,
                          "psnr_y_min_at_s": round(shown[worst] - coded[0], 2) if worst is not None and worst < len(shown) else None,
                          "frames_coded": len(coded), "frames_hidden": len(coded) - len(shown),
                          "viewer_psnr_y_mean": round(float(np.mean(seen)), 2) if seen else None,
                          "viewer_psnr_y_min": round(float(np.min(seen)), 2) if seen else None,
                          "viewer_blank_s": round(shown[0] - coded[0], 2) if shown and coded else None,
                          "sender_peak_rss": peak.group(1) if peak else None}))


if __name__ == "__main__":
    main()
