"""The inputs every sender gets, made once and kept in the cache folder (bench/.build/inputs):

- busy.y4m: busy moving content, 1280x720@30 (ffmpeg's mandelbrot zoom: fine detail that moves
  everywhere in every frame), with the frame marker stamped in (harness/stamp_clip.py) so the
  viewer's frames can be matched to it;
- desktop.y4m: 30 s of a desktop (harness/desktop_clip.py): still stretches, typing, scrolling,
  page jumps, a menu; the rate-quality curve's clip;
- screen.y4m: screen-like content, 1280x720@30, recorded from rtcshare's test source (flat
  areas, text-like detail, a moving element, still periods), encoded at 8 Mbit/s and decoded;
- testsrc-2500k.ivf, busy-2500k.ivf: both contents as VP8 at the benchmark's bitrate (rtcshare
  `--output`), the frames of the packetize + protect micro benchmark: mostly one packet per
  frame for the screen, about ten for the busy content."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))

SECONDS = 10
FPS = 30


def _record_testsrc(binary, path, kbps, seconds=SECONDS, fps=FPS):
    part = path + ".part"
    subprocess.run([binary, "--source", "testsrc", "--size", "1280x720", "--fps", str(fps),
                    "--bitrate", str(kbps), "--duration", str(seconds), "--output", part, "--quiet"],
                   check=True)
    os.replace(part, path)


def record_screen_clip(binary, path, seconds=SECONDS, fps=FPS):
    """Screen-like YUV4MPEG2 at 1280x720: rtcshare's test source encoded at 8 Mbit/s and decoded
    by ffmpeg."""
    ivf = path + ".8000k.ivf"
    _record_testsrc(binary, ivf, 8000, seconds, fps)
    part = path + ".part"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", ivf,
                    "-pix_fmt", "yuv420p", "-r", str(fps), "-f", "yuv4mpegpipe", part], check=True)
    os.replace(part, path)
    os.remove(ivf)


def prepare(cache, binary, log, analysis_python=None):
    """The clips, made where missing; desktop.y4m and the busy clip's marker need
    `analysis_python` (numpy, Pillow): without it there is no desktop clip and busy.y4m is
    unmarked."""
    os.makedirs(cache, exist_ok=True)
    paths = {name: os.path.join(cache, name)
             for name in ("busy.y4m", "screen.y4m", "testsrc-2500k.ivf", "busy-2500k.ivf", "desktop.y4m")}
    # An unmarked busy clip from before the marker: made again.
    unmarked = paths["busy.y4m"] + ".unmarked"
    if analysis_python and os.path.exists(paths["busy.y4m"]) and not os.path.exists(paths["busy.y4m"] + ".marked"):
        os.replace(paths["busy.y4m"], unmarked)
    if not os.path.exists(paths["testsrc-2500k.ivf"]):
        log("making testsrc-2500k.ivf (rtcshare --output, 10 s)")
        _record_testsrc(binary, paths["testsrc-2500k.ivf"], 2500)
    if not os.path.exists(paths["screen.y4m"]):
        log("making screen.y4m (rtcshare's test source, 10 s)")
        record_screen_clip(binary, paths["screen.y4m"])
    if not os.path.exists(paths["busy.y4m"]):
        part = paths["busy.y4m"] + ".part"
        if not os.path.exists(unmarked):
            log("making busy.y4m (ffmpeg mandelbrot, 10 s; slow once)")
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                            "-i", f"mandelbrot=size=1280x720:rate={FPS}", "-frames:v", str(SECONDS * FPS),
                            "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", part], check=True)
            os.replace(part, unmarked)
        if analysis_python:
            log("stamping the frame marker into busy.y4m")
            subprocess.run([analysis_python, os.path.join(HERE, "stamp_clip.py"), unmarked, part], check=True)
            os.replace(part, paths["busy.y4m"])
            open(paths["busy.y4m"] + ".marked", "w").close()
            os.remove(unmarked)
        else:
            os.replace(unmarked, paths["busy.y4m"])
    if analysis_python and not os.path.exists(paths["desktop.y4m"]):
        log("making desktop.y4m (30 s of a desktop, Pillow; about a minute once)")
        part = paths["desktop.y4m"] + ".part"
        subprocess.run([analysis_python, os.path.join(HERE, "desktop_clip.py"), part], check=True)
        os.replace(part, paths["desktop.y4m"])
    if not os.path.exists(paths["busy-2500k.ivf"]):
        log("making busy-2500k.ivf (rtcshare --source y4m:busy.y4m --output, 10 s)")
        part = paths["busy-2500k.ivf"] + ".part"
        subprocess.run([binary, "--source", f"y4m:{paths['busy.y4m']}", "--size", "1280x720", "--fps", str(FPS),
                        "--bitrate", "2500", "--output", part, "--quiet"], check=True)
        os.replace(part, paths["busy-2500k.ivf"])
    return paths
