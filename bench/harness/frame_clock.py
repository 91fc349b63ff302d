"""When each frame of a growing YUV4MPEG2 file was complete: `rtcshare receive --y4m FILE` writes
each frame as it decodes it, so the moment a frame's last byte is in the file is when the viewer
would see it. A thread of the bench (not measured) polls the file's size every 2 ms; the file
lives in /dev/shm where there is one, so writing it costs the receiver no disk and the polling
sees it at once. The times are CLOCK_MONOTONIC seconds, as the feeder's (harness/feeder.py)."""
import os
import threading
import time

POLL_S = 0.002


def frame_store(work, name):
    """Where a received clip goes: RAM when it can (a 30 s 720p clip is 1.2 GB)."""
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else work
    return os.path.join(folder, f"rtcshare-bench-{os.getpid()}-{name}.y4m")


class FrameClock:
    def __init__(self, path):
        self.path = path
        self.times = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        header = frame_bytes = None
        while not self._stop.is_set():
            try:
                size = os.path.getsize(self.path)
            except OSError:
                size = 0
            now = time.monotonic()
            if header is None and size > 0:
                with open(self.path, "rb") as f:
                    line = f.readline()
                if line.endswith(b"\n"):
                    fields = dict((p[:1], p[1:]) for p in line.split()[1:])
                    header = len(line)
                    frame_bytes = len(b"FRAME\n") + int(fields[b"W"]) * int(fields[b"H"]) * 3 // 2
            if header is not None:
                complete = (size - header) // frame_bytes
                while len(self.times) < complete:
                    self.times.append(now)
            time.sleep(POLL_S)

    def stop(self):
        """Stops watching; the times of the frames complete by now."""
        self._stop.set()
        self._thread.join()
        return self.times
