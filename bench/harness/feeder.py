"""The feeder of the end-to-end suite, a process of its own so no sender pays for it: writes a
YUV4MPEG2 clip to standard output as a live source would, one frame every 1/fps s, for a given
number of frames (looping the clip if it is shorter). The clock starts when the sender has taken
the first frame, so a slow start-up does not turn into a burst of late frames. Frames are read
from the file as they go (a 30 s 720p clip is 1.2 GB). With TIMES, the CLOCK_MONOTONIC time each
frame was handed over (its write returned) is written there as a JSON list of seconds: the
source frame's time the viewer's quality is judged at (harness/quality.py).

    python3 feeder.py CLIP.y4m FPS FRAMES [TIMES.json]"""
import json
import sys
import time


def main():
    path, fps, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    times_path = sys.argv[4] if len(sys.argv) > 4 else None
    out = sys.stdout.buffer
    times = []
    with open(path, "rb") as clip:
        header = clip.readline()
        fields = dict((f[:1], f[1:]) for f in header.split()[1:])
        width, height = int(fields[b"W"]), int(fields[b"H"])
        frame_bytes = width * height * 3 // 2
        first = clip.tell()
        try:
            out.write(header)
            start = None
            for i in range(count):
                line = clip.readline()  # "FRAME" and its parameters
                if not line:
                    clip.seek(first)
                    line = clip.readline()
                frame = clip.read(frame_bytes)
                if len(frame) != frame_bytes:
                    sys.exit(f"feeder: {path}: a frame is cut short")
                if start is not None:
                    delay = start + i / fps - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                out.write(b"FRAME\n")
                out.write(frame)
                out.flush()
                times.append(time.monotonic())
                if start is None:
                    start = times[0]
        except BrokenPipeError:
            sys.exit(1)
        finally:
            if times_path:
                with open(times_path, "w") as f:
                    json.dump(times, f)
    out.close()


if __name__ == "__main__":
    main()
