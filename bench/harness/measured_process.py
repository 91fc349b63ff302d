"""A process whose cost is measured: peak RSS, CPU seconds and voluntary context switches
(wake-ups) of that process alone, from the kernel's own accounting.

The totals come from wait4()'s rusage when the process ends (all its threads, and any child it
waited for; none of our senders has one). Figures between two moments of a running process
(a phase of the screen case) come from /proc: utime + stime of the thread group, and the
voluntary switches summed over its live threads."""
import os
import signal
import subprocess
import time

_TICKS = os.sysconf("SC_CLK_TCK")


class Sample:
    """CPU seconds and voluntary context switches of a running process at one moment."""

    def __init__(self, at, cpu_s, wakeups):
        self.at, self.cpu_s, self.wakeups = at, cpu_s, wakeups

    def since(self, earlier):
        """Per second of wall time between `earlier` and this sample."""
        span = self.at - earlier.at
        return {"seconds": round(span, 3),
                "cpu_s_per_s": round((self.cpu_s - earlier.cpu_s) / span, 4),
                "wakeups_per_s": round((self.wakeups - earlier.wakeups) / span, 1)}


class MeasuredProcess:
    def __init__(self, argv, stdin=None, log=None, env=None, cgroup=None):
        """`cgroup`: a `board.CPUCgroup` the process joins before it runs."""
        self.argv = argv
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=stdin, stdout=log or subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT if log else subprocess.DEVNULL, env=env,
                                     preexec_fn=cgroup.join if cgroup else None)
        self.pid = self.proc.pid
        self.usage = None
        self.status = None

    def sample(self):
        """CPU and wake-ups so far (None once the process is gone)."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)
            wakeups = 0
            for task in os.listdir(f"/proc/{self.pid}/task"):
                try:
                    with open(f"/proc/{self.pid}/task/{task}/status") as f:
                        for line in f:
                            if line.startswith("voluntary_ctxt_switches:"):
                                wakeups += int(line.split()[1])
                except FileNotFoundError:
                    pass  # a thread that just ended
            return Sample(time.monotonic(), cpu, wakeups)
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return None

    def interrupt(self):
        """SIGINT: every sender here stops cleanly on it (gst-launch with -e)."""
        if self.usage is None:
            try:
                os.kill(self.pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def wait(self, timeout):
        """Waits for the end (SIGKILL after `timeout` s) and returns the totals."""
        deadline = time.monotonic() + timeout
        while self.usage is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.usage, self.status = usage, os.waitstatus_to_exitcode(status)
                self.proc.returncode = self.status
                break
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.05)
        self.ended_at = time.monotonic()
        u = self.usage
        return {"exit": self.status,
                "peak_rss_mib": round(u.ru_maxrss / 1024, 1),
                "cpu_s": round(u.ru_utime + u.ru_stime, 3),
                "wakeups": u.ru_nvcsw,
                "wall_s": round(self.ended_at - self.started_at, 3)}
