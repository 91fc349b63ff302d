"""The latency case: rtcshare's test source at 1280x720@20 sent over SRTP to the built-in
receiver on loopback, which reads each decoded frame's marker (the capture time, CLOCK_MONOTONIC)
and reports glass-to-glass latency percentiles. Only rtcshare stamps a marker, so this case has
no ffmpeg or GStreamer row."""
import json
import os
import subprocess

import senders
from measured_process import MeasuredProcess


def run(seconds, binary, port, key, work, fps=20):
    stats = os.path.join(work, "latency.rx.json")
    if os.path.exists(stats):
        os.remove(stats)
    receiver = subprocess.Popen([binary, "receive", "--listen", f"127.0.0.1:{port}", "--srtp-key", key,
                                 "--stats-json", stats, "--quiet", "--idle-timeout", "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(work, "latency.log"), "wb") as log:
        measured = MeasuredProcess(senders.rtcshare(binary, "testsrc", fps, port, key,
                                                    ("--duration", str(seconds))), log=log)
    totals = measured.wait(timeout=seconds + 30)
    try:
        receiver.wait(timeout=15)
    except subprocess.TimeoutExpired:
        receiver.terminate()
        receiver.wait()
    rx = {}
    if os.path.exists(stats):
        with open(stats) as f:
            rx = json.load(f)
    return {**totals,
            "frames_received": rx.get("frames", 0),
            "latency_p50_ms": rx.get("latency_p50_ms"),
            "latency_p99_ms": rx.get("latency_p99_ms"),
            "latency_max_ms": rx.get("latency_max_ms")}
