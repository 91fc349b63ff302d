"""The feeder of the end-to-end suite, a process of its own so no sender pays for it: writes a
YUV4MPEG2 clip to standard output as a live source would, one frame every 1/fps s, for a given
number of frames (looping the clip if it is shorter). The clock starts when the sender has taken
the first frame, so a slow start-up does not turn into a burst of late frames.

    python3 feeder.py CLIP.y4m FPS FRAMES"""
import sys
import time


def main():
    path, fps, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    out = sys.stdout.buffer
    with open(path, "rb") as clip:
        header = clip.readline()
        fields = dict((f[:1], f[1:]) for f in header.split()[1:])
        width, height = int(fields[b"W"]), int(fields[b"H"])
        frame_bytes = width * height * 3 // 2
        body = clip.read()
    frames = []
    at = 0
    while at < len(body):
        line_end = body.index(b"\n", at) + 1  # "FRAME" and its parameters
        frames.append(body[line_end:line_end + frame_bytes])
        at = line_end + frame_bytes
    del body
    try:
        out.write(header)
        start = None
        for i in range(count):
            if start is not None:
                delay = start + i / fps - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            out.write(b"FRAME\n")
            out.write(frames[i % len(frames)])
            out.flush()
            if start is None:
                start = time.monotonic()
    except BrokenPipeError:
        sys.exit(1)
    out.close()


if __name__ == "__main__":
    main()
