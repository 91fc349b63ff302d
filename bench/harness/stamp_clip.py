"""Stamps the frame marker (DESIGN.md) into every frame of a YUV4MPEG2 clip: row 1 the frame's
index, row 2 zero, so a receiver's frames can be matched to the ones fed (harness/quality.py).
The busy clip gets it this way; rtcshare's own test source stamps its own.

    python3 stamp_clip.py IN.y4m OUT.y4m      (needs python3-numpy)"""
import sys

import numpy as np

from desktop_clip import stamp


def main():
    with open(sys.argv[1], "rb") as src, open(sys.argv[2], "wb") as out:
        header = src.readline()
        fields = dict((f[:1], f[1:]) for f in header.split()[1:])
        width, height = int(fields[b"W"]), int(fields[b"H"])
        out.write(header)
        i = 0
        while True:
            line = src.readline()
            if not line:
                break
            frame = bytearray(src.read(width * height * 3 // 2))
            y = np.frombuffer(frame, dtype=np.uint8, count=width * height).reshape(height, width)
            stamp(y, i)
            out.write(b"FRAME\n")
            out.write(frame)
            i += 1


if __name__ == "__main__":
    main()
