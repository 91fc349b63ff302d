"""The latency case: rtcshare's test source at 1280x720@20 sent over SRTP to the built-in
receiver on loopback, which reads each decoded frame's marker (the capture time, CLOCK_MONOTONIC)
and reports glass-to-glass latency percentiles. Only rtcshare stamps a marker, so this case has
no ffmpeg or GStreamer row."""
import os

import senders
from builtin_receiver import BuiltinReceiver
from measured_process import MeasuredProcess


def run(seconds, binary, port, key, work, fps=20):
    receiver = BuiltinReceiver(binary, port, key, os.path.join(work, "latency.rx.json"))
    with open(os.path.join(work, "latency.log"), "wb") as log:
        measured = MeasuredProcess(senders.rtcshare(binary, "testsrc", fps, port, key,
                                                    ("--duration", str(seconds))), log=log)
    totals = measured.wait(timeout=seconds + 30)
    rx = receiver.finish()
    return {**totals,
            "frames_received": rx.get("frames", 0),
            "latency_p50_ms": rx.get("latency_p50_ms"),
            "latency_p99_ms": rx.get("latency_p99_ms"),
            "latency_max_ms": rx.get("latency_max_ms")}
