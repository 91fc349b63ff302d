"""The end-to-end case: the same YUV4MPEG2 frames, fed on standard input by a separate feeder
process at 1280x720@30, sent by one sender as VP8 (or H.264) over SRTP to `rtcshare receive` on loopback
(the same receiver for every sender). Measured: the sender's peak RSS, its CPU seconds per
second of media, the frames the receiver decoded, and the SRTP bytes on the wire."""
import os
import subprocess
import sys

import senders
from builtin_receiver import BuiltinReceiver
from measured_process import MeasuredProcess

HERE = os.path.dirname(os.path.abspath(__file__))


def command(sender, binary, port, key, fps, codec):
    if sender == "rtcshare":
        return senders.rtcshare(binary, "y4m:-", fps, port, key, codec=codec)
    if sender == "ffmpeg":
        return senders.ffmpeg_stdin(fps, port, key, codec)
    return senders.gstreamer_stdin(fps, port, key, codec)


def run(sender, clip, seconds, binary, port, key, work, fps=30, codec="vp8"):
    frames = seconds * fps
    receiver = BuiltinReceiver(binary, port, key, os.path.join(work, f"e2e-{sender}.rx.json"), codec=codec)
    feeder = subprocess.Popen([sys.executable, os.path.join(HERE, "feeder.py"), clip, str(fps), str(frames)],
                              stdout=subprocess.PIPE)
    with open(os.path.join(work, f"e2e-{sender}.log"), "wb") as log:
        measured = MeasuredProcess(command(sender, binary, port, key, fps, codec), stdin=feeder.stdout, log=log)
    feeder.stdout.close()  # the sender holds the only read end: the feeder sees it go
    totals = measured.wait(timeout=seconds + 30)
    feeder.wait()
    rx = receiver.finish()
    packets, rtp_bytes = rx.get("packets", 0), rx.get("bytes", 0)
    # The receiver counts RTP bytes after SRTP: each packet had a 10-byte tag on the wire.
    wire = rtp_bytes + 10 * packets
    return {**totals,
            "media_s": seconds,
            "cpu_s_per_media_s": round(totals["cpu_s"] / seconds, 4),
            "frames_fed": frames,
            "frames_received": rx.get("frames", 0),
            "packets_received": packets,
            "packets_lost": rx.get("packets_lost", 0),
            "mbit_per_s": round(wire * 8 / seconds / 1e6, 3)}
