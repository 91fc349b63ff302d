"""The planner against the measurement: for each configuration, what `rtcshare plan` predicts
(its "total", the peak it plans for) beside the peak RSS the same share reaches (wait4's
ru_maxrss of the sender alone), and whether they are within 1 MiB (issue 10's promise).

Configurations: `--peer` and `--whip`, VP8 at 640x360 and 1280x720 (and 1600x900), testsrc and
a Y4M file, audio on and off, and the X11 screen (1920x1080 shared at 1280x720, both transports,
and at its own size over WHIP with VP8 showing a page of dense text) when an Xvfb display is given; H.264 at both sizes with audio; both codecs at 1920x1080 with
audio (what `--size auto` picks for a 1080p screen). The receivers (`rtcshare receive`, the aiortc WHIP server) are not measured.
Every WHIP share goes through a reconnect (the server closes its session 2.5 s after it
connected, `/whip-closing/`): the peak a reconnect makes is planned, so it is measured.

`bench/run --only planner` runs it beside the other cases; run alone it is the check behind
`MemoryPlannerAccuracyTests` (and CI): it records its own short screen clip, starts its own
Xvfb when there is one, and writes every row as JSON:

    python3 bench/harness/planner_case.py RELEASE_BINARY --seconds 6 --json rows.json [--only TEXT]"""
import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

from builtin_receiver import BuiltinReceiver
import inputs
from measured_process import MeasuredProcess
import screen_case
import whip_case

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Tests", "Peers", "whip_server.py")
TOLERANCE_MIB = 1.0
MEASUREMENTS_ON_A_MISS = 3


def configurations(screen_clip, x11_display, whip):
    found = []
    for transport in (["peer"] + (["whip"] if whip else [])):
        for size in ("640x360", "1280x720"):
            for audio in (False, True):
                found.append({"transport": transport, "size": size, "source": "testsrc", "audio": audio})
        found.append({"transport": transport, "size": "1280x720", "source": f"y4m:{screen_clip}", "audio": True})
        # Between 720p and 1080p.
        found.append({"transport": transport, "size": "1600x900", "source": "testsrc", "audio": True})
        # H.264 (openh264), the codec a server may choose instead.
        for size in ("640x360", "1280x720"):
            found.append({"transport": transport, "size": size, "source": "testsrc", "audio": True, "codec": "h264"})
        # A 1080p screen at its own size, both codecs; planned and measured whether or not the
        # plan fits the 50 MiB cap (H.264's does not), so the cap is raised for them.
        for codec in ("vp8", "h264"):
            found.append({"transport": transport, "size": "1920x1080", "source": "testsrc", "audio": True,
                          "codec": codec, "mem_cap": "100M"})
    if x11_display:
        for transport in (["peer"] + (["whip"] if whip else [])):
            found.append({"transport": transport, "size": "1280x720", "source": f"x11:{x11_display}", "audio": True})
        # The 1080p screen at its own size over WHIP with VP8, what `--size auto` picks for it,
        # showing a page of dense text (`text_page`: drawn for this row only).
        if whip:
            found.append({"transport": "whip", "size": "1920x1080", "source": f"x11:{x11_display}", "audio": True,
                          "codec": "vp8", "text_page": True})
    return found


def name(c):
    source = "y4m" if c["source"].startswith("y4m:") else c["source"].split(":")[0]
    return (f"{c['transport']} {c['size']} {source}" + (" text" if c.get("text_page") else "")
            + (" +audio" if c["audio"] else "") + (" h264" if c.get("codec") == "h264" else ""))


def share_args(c, port, key, whip_port):
    args = ["--source", c["source"], "--size", c["size"], "--fps", "20",
            "--audio", "testtone" if c["audio"] else "none", "--codec", c.get("codec", "vp8")]
    if "mem_cap" in c:
        args += ["--mem-cap", c["mem_cap"]]
    if c["transport"] == "peer":
        args += ["--peer", f"127.0.0.1:{port}", "--srtp-key", key]
    else:
        # One codec named: `auto` would plan the larger encoder whichever the server keeps.
        args += ["--whip", f"http://127.0.0.1:{whip_port}/whip-closing/2500/plan", "--whip-bind", "127.0.0.1:0"]
    return args


def planned_mib(binary, args):
    text = subprocess.run([binary, "plan", *args], capture_output=True, text=True).stdout
    m = re.search(r"^\s*total\s+([0-9.]+) MiB", text, re.M)
    return float(m.group(1)) if m else None


def start_whip_server(work):
    port_file, summary = os.path.join(work, "plan-whip.port"), os.path.join(work, "plan-whip.summary.json")
    if os.path.exists(port_file):
        os.remove(port_file)
    server = subprocess.Popen([sys.executable, SERVER, "--port-file", port_file, "--summary", summary],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not (os.path.exists(port_file) and open(port_file).read().strip()):
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            return None, None
        time.sleep(0.1)
    return server, int(open(port_file).read().strip())


def paint_text_page(work, display, size):
    """A page of dense text (`fullhd_case.make_pages`) held on `display` until terminated."""
    import fullhd_case
    fullhd_case.make_pages(work, size)
    w, h = size.split("x")
    pipeline = (f"filesrc location={work}/page0.png ! pngdec ! imagefreeze is-live=true ! videoconvert "
                f"! video/x-raw,width={w},height={h},framerate=1/1 ! ximagesink display={display}")
    painter = subprocess.Popen(["gst-launch-1.0", "-q", *pipeline.split()],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    return painter


def within(planned, measured):
    return planned is not None and abs(round(planned - measured, 1)) <= TOLERANCE_MIB


def share_peak(binary, args, c, port, key, seconds, work):
    """One share of `c`, its receiver started first for `--peer`; wait4's totals of the sender."""
    receiver = None
    if c["transport"] == "peer":
        receiver = BuiltinReceiver(binary, port, key, codec=c.get("codec", "vp8"))
        time.sleep(0.3)
    try:
        with open(os.path.join(work, "planner.log"), "wb") as out:
            return MeasuredProcess([binary, *args, "--duration", str(seconds), "--quiet"], log=out) \
                .wait(timeout=seconds + 40)
    finally:
        if receiver:
            receiver.finish()


def run(binary, screen_clip, seconds, port, key, work, x11_display=None, whip=True, log=print, only=None):
    server, whip_port = start_whip_server(work) if whip else (None, None)
    rows = []
    try:
        for c in configurations(screen_clip, x11_display, whip_port is not None):
            if only and not any(o in name(c) for o in only):
                continue
            args = share_args(c, port, key, whip_port)
            planned = planned_mib(binary, args)
            log(f"  planner: {name(c)}")
            painter = paint_text_page(work, x11_display, c["size"]) if c.get("text_page") else None
            try:
                runs = [share_peak(binary, args, c, port, key, seconds, work)]
                # One share's peak moves by up to ~1.3 MiB from run to run (a WHIP share of the X11
                # screen measured 33.8–36.5 MiB on one machine: where the kernel and the allocator
                # place pages), so a miss is measured twice more and judged by the median of three;
                # every run's figure is kept in the row.
                if not within(planned, runs[0]["peak_rss_mib"]) and runs[0]["exit"] == 0:
                    runs += [share_peak(binary, args, c, port, key, seconds, work)
                             for _ in range(MEASUREMENTS_ON_A_MISS - 1)]
            finally:
                if painter:
                    painter.terminate()
                    painter.wait()
            measured = statistics.median(r["peak_rss_mib"] for r in runs)
            rows.append({"configuration": name(c), **c, "planned_mib": planned, "measured_mib": measured,
                         "runs_mib": [r["peak_rss_mib"] for r in runs],
                         "exit": next((r["exit"] for r in runs if r["exit"] != 0), 0),
                         "planned_minus_measured_mib": None if planned is None else round(planned - measured, 1),
                         "within": within(planned, measured)})
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            # aiortc decodes what it was sent before it exits: on a loaded machine, a while.
            server.wait(timeout=120)
    return rows


def markdown(rows):
    lines = ["| configuration | planned MiB | measured peak MiB | planned − measured | within 1 MiB |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        verdict = "yes" if r["within"] else "**no**"
        runs = r.get("runs_mib", [r["measured_mib"]])
        measured = f"{r['measured_mib']}" + (f" (median of {', '.join(map(str, runs))})" if len(runs) > 1 else "")
        lines.append(f"| {r['configuration']} | {r['planned_mib']} | {measured} | "
                     f"{r['planned_minus_measured_mib']} | {verdict} |")
    met = sum(1 for r in rows if r["within"])
    lines.append("")
    lines.append(f"{met} of {len(rows)} configurations planned within 1 MiB of their measured peak.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="`rtcshare plan` against the measured peak of each share.")
    parser.add_argument("binary", help="rtcshare, release build with the static Swift runtime (as shipped)")
    parser.add_argument("--seconds", type=int, default=6, help="length of each share")
    parser.add_argument("--json", required=True, help="where the rows go")
    parser.add_argument("--work", help="folder for the clip and logs (default: next to --json)")
    parser.add_argument("--only", action="append", default=[],
                        help="only the configurations whose name contains this (repeatable), "
                             "e.g. --only '1920x1080 testsrc +audio h264'")
    args = parser.parse_args()
    # A test runner may start us with signals blocked, which every child inherits: the WHIP
    # server and Xvfb would then never see the SIGTERM that ends them.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    work = args.work or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(work, exist_ok=True)
    clip = os.path.join(work, "planner-screen.y4m")
    inputs.record_screen_clip(args.binary, clip, args.seconds + 2, fps=20)
    key = base64.b64encode(os.urandom(30)).decode()
    port = 40000 + 2 * random.randrange(5000)
    xvfb = screen_case.Xvfb() if shutil.which("Xvfb") else None
    try:
        rows = run(args.binary, clip, args.seconds, port, key, work, x11_display=xvfb.display if xvfb else None,
                   whip=whip_case.available(), log=lambda m: print(m, file=sys.stderr, flush=True),
                   only=args.only)
    finally:
        if xvfb:
            xvfb.close()
        os.remove(clip)
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == "__main__":
    main()
