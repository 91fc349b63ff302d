"""The WHIP case: the end-to-end job (the same frames on stdin from the feeder, 1280x720@30, VP8
CBR) published over WHIP (ICE, DTLS-SRTP) into the aiortc WHIP server of the tests
(Tests/Peers/whip_server.py), which decodes every frame. Two senders, measured alike (the sender
process alone, `MeasuredProcess`): rtcshare `--whip`, and GStreamer, a webrtcbin pipeline with the
end-to-end case's vp8enc settings driven by gst_whip_sender.py under Debian's own Python (its
python3-gi; Debian 12's simple-whip-client aborts at start with libsoup2 and libsoup3 in one
process, so the client is ours). The GStreamer process is a Python interpreter too: PyGObject's
share of its memory and CPU is counted in its row. There is no ffmpeg row: ffmpeg 5.1 has no WHIP
muxer."""
import json
import os
import signal
import subprocess
import sys
import time

from measured_process import MeasuredProcess
import senders

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Tests", "Peers", "whip_server.py")
GST_SENDER = os.path.join(HERE, "gst_whip_sender.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # the interpreter Debian's python3-gi is for
SENDERS = ("rtcshare", "gstreamer")
# What gst_whip_sender.py needs beyond GStreamer's base, good and bad plugins (Debian 12).
GSTREAMER_PACKAGES = ("python3-gi", "gir1.2-gst-plugins-bad-1.0", "gir1.2-nice-0.1", "gstreamer1.0-nice")


def available():
    """The aiortc server can run (every sender needs it)."""
    return subprocess.run([sys.executable, "-c", "import aiortc, aiohttp"], capture_output=True).returncode == 0


def gstreamer_available():
    """The GStreamer sender can run: gi, Gst 1.0, GstWebRTC, Nice, webrtcbin and libnice's elements."""
    return os.path.exists(SYSTEM_PYTHON) and \
        subprocess.run([SYSTEM_PYTHON, GST_SENDER, "--check"], capture_output=True).returncode == 0


def command(sender, binary, fps, url):
    if sender == "rtcshare":
        return [binary, "--source", "y4m:-", "--size", "1280x720", "--fps", str(fps),
                "--bitrate", str(senders.BITRATE_KBPS), "--whip", url, "--quiet"]
    return [SYSTEM_PYTHON, GST_SENDER, "--whip", url, "--fps", str(fps)]


def run(clip, seconds, binary, work, fps=30, sender="rtcshare"):
    tag = "whip" if sender == "rtcshare" else f"whip-{sender}"
    port_file, summary = os.path.join(work, f"{tag}.port"), os.path.join(work, f"{tag}.summary.json")
    for f in (port_file, summary):
        if os.path.exists(f):
            os.remove(f)
    server = subprocess.Popen([sys.executable, SERVER, "--port-file", port_file, "--summary", summary],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the WHIP server did not start")
            time.sleep(0.1)
        port = int(open(port_file).read().strip())
        frames = seconds * fps
        feeder = subprocess.Popen([sys.executable, os.path.join(HERE, "feeder.py"), clip, str(fps), str(frames)],
                                  stdout=subprocess.PIPE)
        argv = command(sender, binary, fps, f"http://127.0.0.1:{port}/whip/bench")
        with open(os.path.join(work, f"{tag}.log"), "wb") as log:
            measured = MeasuredProcess(argv, stdin=feeder.stdout, log=log)
        feeder.stdout.close()
        totals = measured.wait(timeout=seconds + 40)
        feeder.wait()
        time.sleep(0.5)  # the last frames decoded
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    got = {}
    if os.path.exists(summary):
        with open(summary) as f:
            got = json.load(f)
    return {**totals, "media_s": seconds, "cpu_s_per_media_s": round(totals["cpu_s"] / seconds, 4),
            "frames_fed": frames, "frames_received": got.get("video_frames", 0)}
