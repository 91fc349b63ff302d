"""The board row: a sender confined to one core at half its time, what a small board gives a
share. A CPU cgroup of its own per sender (v2: `cpu.max` 50000 100000 and `cpuset.cpus` 0; v1:
`cpu.cfs_quota_us` 50000 of `cpu.cfs_period_us` 100000 and a cpuset of CPU 0), which the
sender joins before it runs (`MeasuredProcess(cgroup=…)`); removed afterwards. Needs root."""
import os

QUOTA_US, PERIOD_US, CPU = 50000, 100000, "0"
ROOT = "/sys/fs/cgroup"


def _write(path, value):
    with open(path, "w") as f:
        f.write(value)


class CPUCgroup:
    def __init__(self, name):
        self.dirs = []
        if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):  # v2
            with open(os.path.join(ROOT, "cgroup.subtree_control")) as f:
                enabled = f.read().split()
            for controller in ("cpu", "cpuset"):
                if controller not in enabled:
                    _write(os.path.join(ROOT, "cgroup.subtree_control"), f"+{controller}")
            path = os.path.join(ROOT, name)
            os.makedirs(path, exist_ok=True)
            self.dirs.append(path)
            _write(os.path.join(path, "cpu.max"), f"{QUOTA_US} {PERIOD_US}")
            _write(os.path.join(path, "cpuset.cpus"), CPU)
        else:  # v1: one group per controller
            cpu = os.path.join(ROOT, "cpu", name)
            os.makedirs(cpu, exist_ok=True)
            self.dirs.append(cpu)
            _write(os.path.join(cpu, "cpu.cfs_period_us"), str(PERIOD_US))
            _write(os.path.join(cpu, "cpu.cfs_quota_us"), str(QUOTA_US))
            cpuset = os.path.join(ROOT, "cpuset", name)
            os.makedirs(cpuset, exist_ok=True)
            self.dirs.append(cpuset)
            with open(os.path.join(ROOT, "cpuset", "cpuset.mems")) as f:
                mems = f.read().strip()
            _write(os.path.join(cpuset, "cpuset.cpus"), CPU)
            _write(os.path.join(cpuset, "cpuset.mems"), mems)
        self.procs = [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def join(self):
        """Called in the child before exec: moves it (and what it starts) into the group."""
        pid = str(os.getpid())
        for procs in self.procs:
            _write(procs, pid)

    def close(self):
        for d in self.dirs:
            try:
                os.rmdir(d)
            except OSError:
                pass


def available():
    """Whether a CPU cgroup can be made here (root, and the cpu controller mounted)."""
    if os.geteuid() != 0:
        return False
    return os.path.exists(os.path.join(ROOT, "cgroup.controllers")) or \
        os.path.exists(os.path.join(ROOT, "cpu", "cpu.cfs_quota_us"))
