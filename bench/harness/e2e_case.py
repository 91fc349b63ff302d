"""The end-to-end case: the same YUV4MPEG2 frames, fed on standard input by a separate feeder
process at 1280x720@30, sent by one sender as VP8 (or H.264) over SRTP to `rtcshare receive` on loopback
(the same receiver for every sender). Measured: the sender's peak RSS, its CPU seconds per
second of media, the frames the receiver decoded, the SRTP bytes on the wire, and — with an
interpreter for the analysis (numpy, scipy) — what the viewer got: every decoded frame against
the frame fed (PSNR-Y, SSIM-Y, matched by the frame marker) and the picture on the viewer's
screen at each source frame's time (harness/quality.py; the receiver's frames are timed by
harness/frame_clock.py)."""
import json
import os
import subprocess
import sys

import senders
from builtin_receiver import BuiltinReceiver
from frame_clock import FrameClock, frame_store
from measured_process import MeasuredProcess

HERE = os.path.dirname(os.path.abspath(__file__))


def command(sender, binary, port, key, fps, codec, kbps):
    if sender == "rtcshare":
        return senders.rtcshare(binary, "y4m:-", fps, port, key, codec=codec, kbps=kbps)
    if sender == "ffmpeg":
        return senders.ffmpeg_stdin(fps, port, key, codec, kbps)
    return senders.gstreamer_stdin(fps, port, key, codec, kbps)


def _fresh(path):
    if os.path.lexists(path):
        os.remove(path)
    return path


def run(sender, clip, seconds, binary, port, key, work, fps=30, codec="vp8", kbps=senders.BITRATE_KBPS,
        analysis_python=None, cgroup=None, tag="e2e", pending=None):
    """One sender's run. With `analysis_python` the viewer's quality is added: at once, or —
    with a `pending` list — by a background analysis (niced, so it takes what the next case
    leaves) whose finishing step is appended to `pending`; calling it fills the result in."""
    frames = seconds * fps
    name = f"{tag}-{sender}"
    fed_times = _fresh(os.path.join(work, f"{name}.fed.json"))
    received = _fresh(frame_store(work, name)) if analysis_python else None
    receiver = BuiltinReceiver(binary, port, key, os.path.join(work, f"{name}.rx.json"), codec=codec, y4m=received)
    clock = FrameClock(received) if received else None
    feeder = subprocess.Popen([sys.executable, os.path.join(HERE, "feeder.py"), clip, str(fps), str(frames),
                               fed_times], stdout=subprocess.PIPE)
    with open(os.path.join(work, f"{name}.log"), "wb") as log:
        measured = MeasuredProcess(command(sender, binary, port, key, fps, codec, kbps), stdin=feeder.stdout,
                                   log=log, cgroup=cgroup)
    feeder.stdout.close()  # the sender holds the only read end: the feeder sees it go
    totals = measured.wait(timeout=seconds + 30)
    feeder.wait()
    rx = receiver.finish()
    packets, rtp_bytes = rx.get("packets", 0), rx.get("bytes", 0)
    # The receiver counts RTP bytes after SRTP: each packet had a 10-byte tag on the wire.
    wire = rtp_bytes + 10 * packets
    result = {**totals,
              "media_s": seconds,
              "kbps_asked": kbps,
              "cpu_s_per_media_s": round(totals["cpu_s"] / seconds, 4),
              "frames_fed": frames,
              "frames_received": rx.get("frames", 0),
              "packets_received": packets,
              "packets_lost": rx.get("packets_lost", 0),
              "wire_kbytes": round(wire / 1000, 1),
              "mbit_per_s": round(wire * 8 / seconds / 1e6, 3)}
    if clock:
        finish = _quality(analysis_python, clip, received, fed_times, clock.stop(), frames, work, name, result)
        if pending is None:
            finish()
        else:
            pending.append(finish)
    return result


QUALITY_FIELDS = ("psnr_y", "psnr_y_p5", "ssim_y", "ssim_y_p5", "frames_matched", "distinct_frames_matched", "frames_shown",
                  "viewer_psnr_y", "viewer_psnr_y_p5", "viewer_frames_on_time", "viewer_psnr_y_per_second",
                  "delay_ms_p50", "delay_ms_p95")


def _quality(python, clip, received, fed_times, received_times, frames, work, name, result):
    """Starts harness/quality.py on what the receiver wrote, in its own interpreter (numpy,
    scipy); the step returned waits for it, puts its figures into `result` and removes the
    received clip."""
    rx_times = os.path.join(work, f"{name}.rx-times.json")
    with open(rx_times, "w") as f:
        json.dump(received_times, f)
    out = os.path.join(work, f"{name}.quality.json")
    with open(out, "w") as stdout:
        proc = subprocess.Popen(["nice", "-n", "19", python, os.path.join(HERE, "quality.py"), clip, received,
                                 fed_times, rx_times, str(frames)], stdout=stdout, stderr=subprocess.PIPE, text=True)

    def finish():
        _, err = proc.communicate()
        os.remove(received)
        if proc.returncode != 0:
            result["quality_error"] = (err.strip().splitlines() or ["no output"])[-1]
            return
        with open(out) as f:
            q = json.load(f)
        result.update({k: q.get(k) for k in QUALITY_FIELDS})
    return finish
