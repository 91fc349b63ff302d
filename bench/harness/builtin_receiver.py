"""`rtcshare receive` as the bench's receiver (not measured): started before a sender, listening
on 127.0.0.1, and its JSON statistics read once it has stopped (2 s after the last packet)."""
import json
import os
import subprocess


class BuiltinReceiver:
    def __init__(self, binary, port, key, stats=None, codec="vp8", y4m=None):
        """`y4m`: where the decoded frames go (`harness/y4m_tap.py`'s named pipe)."""
        self.stats = stats
        if stats and os.path.exists(stats):
            os.remove(stats)
        extra = ["--stats-json", stats] if stats else []
        if y4m:
            extra += ["--y4m", y4m]
        self.proc = subprocess.Popen([binary, "receive", "--listen", f"127.0.0.1:{port}", "--srtp-key", key,
                                      "--codec", codec, *extra, "--quiet", "--idle-timeout", "2"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def finish(self, timeout=15):
        """Waits for the receiver to stop (terminated after `timeout` s); its statistics, or {}."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait()
        if self.stats and os.path.exists(self.stats):
            with open(self.stats) as f:
                return json.load(f)
        return {}
