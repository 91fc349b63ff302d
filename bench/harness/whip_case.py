"""The WHIP row: the end-to-end job (the same frames on stdin from the feeder, 1280x720@30, VP8
CBR) published by rtcshare over WHIP (ICE, DTLS-SRTP) into the aiortc WHIP server of the tests
(Tests/Peers/whip_server.py), which decodes every frame. There is no ffmpeg or GStreamer row:
ffmpeg 5.1 has no WHIP muxer, and Debian 12's simple-whip-client (GStreamer webrtcbin) aborts at
start with libsoup2 and libsoup3 in one process."""
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


def available():
    return subprocess.run([sys.executable, "-c", "import aiortc, aiohttp"], capture_output=True).returncode == 0


def run(clip, seconds, binary, work, fps=30):
    port_file, summary = os.path.join(work, "whip.port"), os.path.join(work, "whip.summary.json")
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
        argv = [binary, "--source", "y4m:-", "--size", "1280x720", "--fps", str(fps),
                "--bitrate", str(senders.BITRATE_KBPS), "--whip", f"http://127.0.0.1:{port}/whip/bench", "--quiet"]
        with open(os.path.join(work, "whip.log"), "wb") as log:
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
