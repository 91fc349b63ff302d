"""The screen-capture case: an Xvfb screen of 1920x1080 shared at 1280x720@30 as VP8 over SRTP,
first static, then changing. What is measured per phase: the sender's CPU seconds per second,
its wake-ups (voluntary context switches) per second, and the bandwidth a counting receiver on
loopback sees; over the whole run, its peak RSS and the time from its start to its first packet.

The picture is drawn by GStreamer windows (ximagesink) on the bare X server: SMPTE bars for the
static phase (drawn once and kept), then the same bars scrolling sideways at 30 fps (every frame
changes, as when a page scrolls). Drawing happens in processes of their own, not measured."""
import os
import subprocess
import time

import senders
from measured_process import MeasuredProcess
from udp_counter import UDPCounter, mbit_per_s

SCREEN = "1920x1080"
SETTLE_S = 3  # start-up left out of the static phase (and rtcshare's 1.5 s idle settle time)


class Xvfb:
    """An X server of its own; Xvfb picks a free display and writes its number to -displayfd."""

    def __init__(self, size=SCREEN):
        read, write = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{size}x24",
                                      "-nolisten", "tcp", "-noreset"], pass_fds=(write,),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def _draw(display, moving):
    w, h = SCREEN.split("x")
    caps = f"video/x-raw,width={w},height={h},framerate=30/1"
    if moving:
        pipeline = f"videotestsrc is-live=true pattern=smpte75 horizontal-speed=8 ! {caps} ! ximagesink display={display}"
    else:
        # One picture, then a branch that never ends, so the window (and the picture) stays.
        pipeline = (f"videotestsrc num-buffers=1 pattern=smpte75 ! {caps} ! ximagesink display={display} "
                    "videotestsrc is-live=true ! video/x-raw,width=16,height=16,framerate=1/1 ! fakesink")
    return subprocess.Popen(["gst-launch-1.0", "-q", *pipeline.split()],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def command(sender, binary, display, port, key, fps, idle_fps):
    if sender == "rtcshare":
        return senders.rtcshare(binary, f"x11:{display}", fps, port, key)
    if sender == "rtcshare-idle":
        return senders.rtcshare(binary, f"x11:{display}", fps, port, key, ("--idle-fps", str(idle_fps)))
    if sender == "ffmpeg":
        return senders.ffmpeg_x11(display, SCREEN, fps, port, key)
    return senders.gstreamer_x11(display, fps, port, key)


def run(sender, xvfb, phase_s, binary, port, key, work, fps=30, idle_fps=2):
    static = _draw(xvfb.display, moving=False)
    time.sleep(1.0)  # the static picture is up before the sender starts
    counter = UDPCounter(port)
    moving = None
    try:
        with open(os.path.join(work, f"screen-{sender}.log"), "wb") as log:
            measured = MeasuredProcess(command(sender, binary, xvfb.display, port, key, fps, idle_fps), log=log)
        time.sleep(SETTLE_S)
        s0, c0 = measured.sample(), counter.totals()
        time.sleep(phase_s)
        s1, c1 = measured.sample(), counter.totals()
        moving = _draw(xvfb.display, moving=True)
        time.sleep(phase_s)
        s2, c2 = measured.sample(), counter.totals()
        measured.interrupt()
        totals = measured.wait(timeout=10)
        if None in (s0, s1, s2):
            raise RuntimeError(f"{sender} ended early (exit {totals['exit']})")
        first = None if counter.first_at is None else round((counter.first_at - measured.started_at) * 1000, 1)
        return {**totals,
                "static": {**s1.since(s0), "mbit_per_s": mbit_per_s(c0, c1)},
                "changing": {**s2.since(s1), "mbit_per_s": mbit_per_s(c1, c2)},
                "first_packet_ms": first,
                "packets_received": c2[2]}
    finally:
        counter.close()
        for p in (static, moving):
            if p is not None:
                p.terminate()
                p.wait()
