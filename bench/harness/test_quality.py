"""Checks of quality.py on small clips made here: a still stretch that a sender does not send
again is shown, not missed; a frame that never came is missed and the viewer sees the one before.

    /usr/bin/python3 -m unittest discover -s bench/harness -p 'test_*.py'   (numpy, scipy, Pillow)
"""
import os
import tempfile
import unittest

import numpy as np

import quality
from desktop_clip import stamp

W, H = 320, 48


def picture(counter, shade):
    """A frame with the marker `counter` and the rest of the luma at `shade`."""
    y = np.full((H, W), shade, dtype=np.uint8)
    stamp(y, counter)
    return y.tobytes() + bytes([128]) * (W * H // 2)


def write(path, frames):
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{W} H{H} F30:1 Ip A1:1 C420jpeg\n".encode())
        for frame in frames:
            f.write(b"FRAME\n" + frame)


class FramesShown(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def run_case(self, source, received, received_at=None):
        src, rx = os.path.join(self.dir.name, "src.y4m"), os.path.join(self.dir.name, "rx.y4m")
        write(src, source)
        write(rx, received)
        fed_times = [k / 30 for k in range(len(source))]
        return quality.compare(src, rx, fed_times, received_at or [t + 0.01 for t in fed_times][:len(received)])

    def test_repeat_of_a_still_picture_not_sent_is_shown(self):
        # Frames 2, 3 and 4 repeat frame 1 byte for byte (same marker): a still screen.
        source = [picture(0, 60), picture(1, 90), picture(1, 90), picture(1, 90), picture(1, 90), picture(2, 120)]
        received = [picture(0, 60), picture(1, 90), picture(2, 120)]
        times = [0.01, 1 / 30 + 0.01, 5 / 30 + 0.01]
        out = self.run_case(source, received, times)
        self.assertEqual(out["frames_decoded"], 3)
        self.assertEqual(out["frames_shown"], 6)
        self.assertEqual(out["viewer_frames_on_time"], 6)
        self.assertEqual(out["viewer_psnr_y"], 100.0)

    def test_a_frame_that_never_came_is_missed(self):
        source = [picture(0, 60), picture(1, 90), picture(2, 120), picture(3, 150)]
        received = [picture(0, 60), picture(1, 90), picture(3, 150)]
        times = [0.01, 1 / 30 + 0.01, 3 / 30 + 0.01]
        out = self.run_case(source, received, times)
        self.assertEqual(out["frames_shown"], 3)
        self.assertEqual(out["viewer_frames_on_time"], 3)
        # At frame 2's time the viewer still sees frame 1: not a perfect picture.
        self.assertLess(out["viewer_psnr_y"], 100.0)

    def test_differing_pictures_under_one_marker_need_a_frame_each(self):
        # Frame 2 carries frame 1's marker but its picture differs: sending one frame of the two
        # does not show both.
        source = [picture(0, 60), picture(1, 90), picture(1, 95), picture(2, 120)]
        one = self.run_case(source, [picture(0, 60), picture(1, 90), picture(2, 120)],
                            [0.01, 1 / 30 + 0.01, 3 / 30 + 0.01])
        self.assertEqual(one["frames_shown"], 3)
        both = self.run_case(source, [picture(0, 60), picture(1, 90), picture(1, 95), picture(2, 120)])
        self.assertEqual(both["frames_shown"], 4)


if __name__ == "__main__":
    unittest.main()
