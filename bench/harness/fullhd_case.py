"""A 1080p screen of text shared at its own size: the peak RSS of the whole sender (wait4's
ru_maxrss) and where its resident pages are (/proc/PID/smaps, summed by mapping, at the
highest resident size the sampler saw and mid-share).

The screen is an Xvfb display of 1920x1080 showing pages of dense 11 px monospaced text (the
worst a screen of text gives an encoder: every macroblock detailed): one page held still for
`--still` seconds, then a different page every second (a full-screen change each time). With
`--source testsrc` the test source is shared instead (no X server).

    python3 bench/harness/fullhd_case.py BINARY [--codec vp8|h264] [--size 1920x1080] [--fps 15]
        [--seconds 20] [--still 6] [--transport whip|file] [--source x11|testsrc] [--runs 3]
        [--arg=--mem-cap --arg=100M] [--fill-delay] [--reconnect-after MS]

`--transport whip` publishes into the aiortc WHIP server (Tests/Peers/whip_server.py) with
audio (testtone); `file` writes the encoded video to a file (no transport, no audio). Prints one
JSON object: every run's peak and the median, and the breakdown of the median run.

`--reconnect-after MS` (WHIP) has the server close each session MS after it connected
(`/whip-closing/`), and reports where the first reconnect's pages are: smaps just before the
connection was lost, at the highest resident size from then until 3 s after it came back, and
at those 3 s (`reconnect` in the run's figures; the difference of each to "before" per mapping).

`--fill-delay` (with `--transport file` and the X11 source) also decodes the file and says how
long after the first keyframe every macroblock of the still page has been coded: a macroblock
still shows a flat picture while its decoded luma has no detail where the page's has (a VP8
keyframe above 1600x900 is coded flat and the page follows in bands, hidden until whole, so the
first picture shown from the keyframe on, `flat_at_keyframe`, has none)."""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from screen_case import Xvfb

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Tests", "Peers", "whip_server.py")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
PAGES = 4


def make_pages(work, size):
    """PNG pages of dense text, each different: random printable words, 11 px lines."""
    import random
    w, h = size.split("x")
    r = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789(){}[];:.,=+-*/<>_"
    for page in range(PAGES):
        lines = []
        for i in range(int(h) // 11 + 2):
            s = ""
            while len(s) < int(w) // 6:
                s += "".join(r.choice(alphabet) for _ in range(r.randint(2, 10))) + " "
            lines.append(f"{i + page * 100:5d}  {s}")
        text = os.path.join(work, f"page{page}.txt")
        with open(text, "w") as f:
            f.write("\n".join(lines))
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        f"color=c=white:s={size}", "-frames:v", "1", "-vf",
                        f"drawtext=fontfile={FONT}:textfile={text}:fontsize=11:fontcolor=black:x=2:y=2:"
                        "line_spacing=0:expansion=none", os.path.join(work, f"page{page}.png")], check=True)


class Screen:
    """Xvfb at `size`, first one page still, then (`change()`) a new page every second."""

    def __init__(self, work, size):
        self.work, self.size = work, size
        self.xvfb = Xvfb(size)
        self.display = self.xvfb.display
        self.painter = self._paint(still=True)
        time.sleep(1.5)

    def _paint(self, still):
        w, h = self.size.split("x")
        rate = "1/1000" if still else "1/1"
        pipeline = (f"multifilesrc location={self.work}/page%d.png loop=true caps=image/png,framerate={rate} "
                    f"! pngdec ! videoconvert ! video/x-raw,width={w},height={h} "
                    f"! ximagesink display={self.display} sync=true")
        return subprocess.Popen(["gst-launch-1.0", "-q", *pipeline.split()],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def change(self):
        new = self._paint(still=False)
        time.sleep(0.3)
        self.painter.terminate()
        self.painter.wait()
        self.painter = new

    def close(self):
        self.painter.terminate()
        self.painter.wait()
        self.xvfb.close()


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def smaps(pid):
    """Rss in KiB per mapping: the file's base name, [heap], [stack], or 'anonymous'."""
    out = {}
    name = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                parts = line.split()
                if "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
                    name = os.path.basename(parts[5]) if len(parts) >= 6 else "anonymous"
                    if name.startswith("[stack"):
                        name = "[stack]"
                elif parts[0] == "Rss:" and name is not None:
                    out[name] = out.get(name, 0) + int(parts[1])
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return {k: v for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v > 0}


class ReconnectWatch:
    """The first reconnect of a share, from its log and its smaps: the smaps read at least
    `LEAD_S` before the log said "reconnecting" (the line comes after the loss was handled, which
    may have loaded libcurl already), the one at the highest resident size from then until 3 s
    after "reconnected", and the one at those 3 s."""

    AFTER_S = 3.0
    EVERY_S = 0.1
    LEAD_S = 0.5

    def __init__(self, log_path):
        self.log_path = log_path
        self.samples, self.last_at = [], -1.0
        self.before, self.lost_at, self.back_at = None, None, None
        self.high_kib, self.at_high, self.high_at, self.after = 0, None, None, None

    def _log(self):
        try:
            return open(self.log_path, errors="replace").read()
        except FileNotFoundError:
            return ""

    def sample(self, pid, kib, now):
        if self.after is not None:
            return
        text = self._log()
        if self.lost_at is None:
            if "rtcshare: reconnecting" in text:
                at, kib = next(((t, k) for t, k in reversed(self.samples) if t <= now - self.LEAD_S), self.samples[0])
                self.before, self.lost_at = {"at_s": round(at, 2), "kib": kib}, now
                self.high_kib = 0
            elif now - self.last_at >= self.EVERY_S:
                self.last_at = now
                self.samples = self.samples[-20:] + [(now, smaps(pid))]
            return
        if self.back_at is None and "rtcshare: reconnected" in text:
            self.back_at = now
        if kib > self.high_kib + 128:
            self.high_kib, self.at_high, self.high_at = kib, smaps(pid), now
        if self.back_at is not None and now - self.back_at >= self.AFTER_S:
            self.after = {"at_s": round(now, 2), "kib": smaps(pid)}

    def figures(self):
        if self.before is None:
            return None
        base = self.before["kib"]

        def grown(kib):
            names = set(kib) | set(base)
            d = {n: kib.get(n, 0) - base.get(n, 0) for n in names}
            return {n: v for n, v in sorted(d.items(), key=lambda kv: -abs(kv[1])) if abs(v) >= 64}

        def total_mib(kib):
            return round(sum(kib.values()) / 1024, 2)

        out = {"before_at_s": self.before["at_s"], "lost_at_s": round(self.lost_at, 2),
               "back_at_s": self.back_at and round(self.back_at, 2),
               "before_mib": total_mib(base), "before_kib": base}
        if self.at_high:
            out.update({"high_at_s": round(self.high_at, 2), "high_mib": total_mib(self.at_high),
                        "high_minus_before_kib": grown(self.at_high)})
        if self.after:
            out.update({"after_at_s": self.after["at_s"], "after_mib": total_mib(self.after["kib"]),
                        "after_minus_before_kib": grown(self.after["kib"])})
        return out


def fill_delay(work, size):
    """Frames and seconds from the first keyframe until at most 1 % of the page's detailed
    macroblocks still decode flat (luma range under 8 where the page's is 64 or more), in the
    pictures a viewer is shown: a frame marked not to be shown (VP8's show_frame 0, the flat
    keyframe and its bands above 1600x900) decodes to none, so the first shown may be the one
    that completes the page. Frames are counted as coded (shown or not)."""
    import numpy as np
    w, h = (int(v) for v in size.split("x"))
    page = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", os.path.join(work, "page0.png"),
                           "-f", "rawvideo", "-pix_fmt", "gray", "-"], check=True, capture_output=True).stdout
    ivf = os.path.join(work, "out.ivf")

    def listed(entries):
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", entries,
                              "-of", "csv=p=0", ivf], check=True, capture_output=True, text=True).stdout
        return [t.split(",") for t in out.split()]
    packets = listed("packet=pts_time,flags")  # every frame coded
    shown = [float(r[0]) for r in listed("frame=pts_time")]  # the pictures decoded, in order
    frames = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", ivf, "-f", "rawvideo",
                             "-pix_fmt", "gray", "-fps_mode", "passthrough", "-"], check=True, capture_output=True).stdout

    def blocks(luma):
        a = np.frombuffer(luma, dtype=np.uint8).reshape(h, w)[: h // 16 * 16, : w // 16 * 16]
        b = a.reshape(h // 16, 16, w // 16, 16).swapaxes(1, 2).reshape(h // 16, w // 16, 256)
        return b.max(axis=2).astype(int) - b.min(axis=2)

    detailed = blocks(page) >= 64
    first_key = next(i for i, r in enumerate(packets) if "K" in r[1])
    start = float(packets[first_key][0])
    coded = [float(r[0]) for r in packets]
    pictures = [i for i, t in enumerate(shown) if t >= start - 1e-6 and (i + 1) * w * h <= len(frames)]
    for n, i in enumerate(pictures):
        flat = (blocks(frames[i * w * h:(i + 1) * w * h]) < 8) & detailed
        if n == 0:
            flat_first = int(flat.sum())
        if flat.sum() <= detailed.sum() // 100:
            return {"frames_after_keyframe": sum(1 for t in coded if start < t <= shown[i] + 1e-6),
                    "seconds": round(shown[i] - start, 3),
                    "flat_at_keyframe": flat_first, "hidden": len(coded) - len(shown),
                    "detailed_macroblocks": int(detailed.sum())}
    return None


def run_once(args, work, display, screen):
    port_file, summary = os.path.join(work, "whip.port"), os.path.join(work, "whip.json")
    server = None
    common = ["--source", f"x11:{display}" if args.source == "x11" else "testsrc", "--size", args.size,
              "--fps", str(args.fps), "--codec", args.codec, "--duration", str(args.seconds), *args.arg]
    if args.transport == "whip":
        for f in (port_file, summary):
            if os.path.exists(f):
                os.remove(f)
        server = subprocess.Popen([sys.executable, SERVER, "--port-file", port_file, "--summary", summary],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the WHIP server did not start")
            time.sleep(0.1)
        port = int(open(port_file).read().strip())
        path = f"whip-closing/{args.reconnect_after}" if args.reconnect_after else "whip"
        argv = [args.binary, *common, "--audio", "testtone", "--whip", f"http://127.0.0.1:{port}/{path}/fullhd",
                "--whip-bind", "127.0.0.1:0"]
    else:
        argv = [args.binary, *common, "--output", os.path.join(work, "out.ivf" if args.codec == "vp8" else "out.h264")]
    log = open(os.path.join(work, "sender.log"), "wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    started = time.monotonic()
    high, at_high, mid, high_at = 0, {}, {}, 0.0
    changed = args.source != "x11"
    usage = None
    watch = ReconnectWatch(os.path.join(work, "sender.log")) if args.reconnect_after else None
    while usage is None:
        pid, status, usage_now = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            usage, code = usage_now, os.waitstatus_to_exitcode(status)
            break
        now = time.monotonic() - started
        kib = rss_kib(proc.pid)
        if kib > high + 256:
            high, high_at = kib, round(now, 2)
            at_high = smaps(proc.pid)
        if watch:
            watch.sample(proc.pid, kib, now)
        if not mid and now > args.seconds / 2 + args.still / 2:
            mid = smaps(proc.pid)
        if not changed and now > args.still:
            screen.change()
            changed = True
        time.sleep(0.004)
    log.close()
    decoded = None
    if server:
        # aiortc decodes behind the share (a 1080p one by many seconds): the count is read once
        # the server lists the session as finished (all it received decoded), not at once.
        port = int(open(port_file).read().strip())
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/summary", timeout=15) as r:
                    now = json.load(r)
                if "fullhd" in now.get("finished", []) + now.get("unfinished", []):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        if os.path.exists(summary):
            decoded = json.load(open(summary)).get("by_session", {}).get("fullhd", {}).get("video_frames")
    text = open(os.path.join(work, "sender.log"), errors="replace").read()
    tail = text[-400:]
    encoded = re.findall(r"(\d+) frames in [0-9.]+ s", text)
    delay = fill_delay(work, args.size) if args.fill_delay and args.transport == "file" and args.source == "x11" else None
    return {"exit": code, "fill_delay": delay, "reconnect": watch.figures() if watch else None, "encoded": int(encoded[-1]) if encoded else None, "peak_mib": round(usage.ru_maxrss / 1024, 2), "sampled_high_mib": round(high / 1024, 2), "high_at_seconds": high_at,
            "smaps_at_high_kib": at_high, "smaps_mid_kib": mid, "decoded": decoded,
            "log_tail": tail if code != 0 else ""}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--codec", default="vp8")
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--screen", default="1920x1080")
    p.add_argument("--fps", type=int, default=15)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--still", type=int, default=6)
    p.add_argument("--transport", default="whip", choices=["whip", "file"])
    p.add_argument("--source", default="x11", choices=["x11", "testsrc"])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--fill-delay", action="store_true")
    p.add_argument("--reconnect-after", type=int, help="WHIP: the server closes each session this many ms after it connected")
    p.add_argument("--arg", action="append", default=[], help="one more argument for the sender (repeatable)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        runs = []
        for _ in range(args.runs):
            screen = None
            if args.source == "x11":
                make_pages(work, args.screen)
                screen = Screen(work, args.screen)
            try:
                runs.append(run_once(args, work, screen.display if screen else None, screen))
            finally:
                if screen:
                    screen.close()
        peaks = [r["peak_mib"] for r in runs]
        median = statistics.median(peaks)
        chosen = min(runs, key=lambda r: abs(r["peak_mib"] - median))
        print(json.dumps({"configuration": vars(args), "peaks_mib": peaks, "median_mib": median,
                          "exits": [r["exit"] for r in runs], "encoded": [r["encoded"] for r in runs], "decoded": [r["decoded"] for r in runs],
                          "median_run": chosen}, indent=1))


if __name__ == "__main__":
    main()
