#!/usr/bin/env bash
# What each screen source costs: a 1920x1080 screen shared at 1280x720@20 (VP8, SRTP to a
# counting socket on loopback) from the X11 source (Xvfb), the wayland source (headless sway)
# and the portal source (xdg-desktop-portal-wlr over the same sway, PipeWire, WirePlumber, a
# private session bus). The picture is the same for all three: GStreamer's SMPTE bars scrolling
# sideways at 20 fps (ximagesink / waylandsink covering the screen), then one still picture of
# them. Between the two, a small change: a 384x48 region at the top-left changing at 20 fps
# over a still picture (on X11 a second ximagesink window over the still bars; on Wayland the
# tests' wayland-test-client, its marker alone ticking and alone damaged). Printed as a
# markdown table, per source:
#   CPU %      the sender's utime + stime over a phase's wall time (/proc/PID/stat)
#   wake-ups/s voluntary + involuntary context switches summed over all its threads
#              (/proc/PID/task/*/status) over the phase's wall time
#   rows/picture  buffer rows the wayland and portal sources converted per picture they
#              delivered in the small phase (--stats-json's source_rows; of 1080)
#   first frame  from the sender's start to the first datagram on the socket (none --to-file)
#   VmHWM      the sender's peak resident size (/proc/PID/status, read until it exits), beside
#              the total `rtcshare plan` prints for the same command line
# Usage: bench/capture-cost.sh [RELEASE_BIN] [--phase-seconds N] [--only x11|wayland|portal]
#        [--smaps]   (the sender's resident pages per mapping at its peak, for each source)
#        [--to-file] (the share written to an IVF file instead of sent: no transport)
# Without RELEASE_BIN it builds rtcshare as shipped (scripts/build-release). Runs as root (sway
# refuses root, so sway and the portal chain run as `nobody`; so does the portal's sender, since
# the portal reads its caller's /proc entries). Needs sway, Xvfb, GStreamer (good, bad: waylandsink),
# pipewire, wireplumber, xdg-desktop-portal(-wlr), dbus-daemon, busctl and cc —
# what scripts/setup installs for the tests.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bin=""
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then bin="$1"; shift; fi
[ -n "$bin" ] || bin="$("$repo/scripts/build-release" --scratch-path "$repo/.build-release")"
work="$(mktemp -d /tmp/rtcshare-capture-cost.XXXXXX)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# The shim the portal tests preload into xdg-desktop-portal-wlr 0.7, so that it casts from a
# compositor without a GPU (its issue #289).
cc -shared -fPIC -O2 -o "$work/screencopy-shm.so" "$repo/Tests/PortalTestShim/screencopy-shm.c" -ldl
chmod 755 "$work/screencopy-shm.so"
# The tests' Wayland client, for the small change on the wayland and portal sources.
client="$repo/Tests/WaylandTestClient"
cc -O2 -D_GNU_SOURCE -I"$client" -o "$work/wayland-test-client" "$client/main.c" "$client/xdg-shell-protocol.c" \
    "$client/wlr-virtual-pointer-unstable-v1-protocol.c" -lwayland-client
python3 - "$bin" "$work" "$@" <<'PY'
import argparse, os, re, signal, socket, subprocess, sys, threading, time

parser = argparse.ArgumentParser(prog="capture-cost.sh")
parser.add_argument("binary")
parser.add_argument("work")
parser.add_argument("--phase-seconds", type=float, default=8)
parser.add_argument("--only", action="append", default=[])
parser.add_argument("--smaps", action="store_true")
parser.add_argument("--to-file", action="store_true")
args = parser.parse_args()
signal.pthread_sigmask(signal.SIG_SETMASK, set())
BIN, WORK = os.path.abspath(args.binary), args.work
NOBODY = 65534
SIZE, SHARE, FPS = (1920, 1080), "1280x720", 20
SETTLE_S = 3  # the start and a change of picture left out of a phase
TICKS = os.sysconf("SC_CLK_TCK")


def log(text):
    print(text, file=sys.stderr, flush=True)


def wait_until(what, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(interval)
    return what()


def as_nobody(env):
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "env", "-i",
            *[f"{k}={v}" for k, v in env.items()]]


class Processes:
    """Everything started for one source, ended (SIGKILL, newest first) when it is done."""

    def __init__(self):
        self.started = []

    def start(self, argv, name, env=None):
        logfile = open(os.path.join(WORK, name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=logfile, stderr=subprocess.STDOUT, env=env, cwd=WORK)
        self.started.append(p)
        return p

    def close(self):
        for p in reversed(self.started):
            if p.poll() is None:
                p.kill()
            p.wait()
        self.started.clear()


class Sway:
    """Headless sway with one 1920x1080 output, as nobody, in a runtime directory of its own."""

    def __init__(self, procs, name):
        self.dir = os.path.join(WORK, f"sway-{name}")
        self.run = os.path.join(self.dir, "run")
        os.makedirs(self.run, mode=0o700)
        os.chmod(self.dir, 0o755)
        os.chown(self.run, NOBODY, NOBODY)
        config = os.path.join(self.dir, "config")
        with open(config, "w") as f:
            f.write(f"output HEADLESS-1 resolution {SIZE[0]}x{SIZE[1]} bg #336699 solid_color\n"
                    "default_border none\ndefault_floating_border none\n")
        os.chmod(config, 0o644)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.dir, "XDG_RUNTIME_DIR": self.run}
        procs.start(as_nobody({**self.env, "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                               "WLR_RENDERER": "pixman"}) + ["sway", "-c", config], f"sway-{name}")
        self.socket = os.path.join(self.run, "wayland-1")
        if not wait_until(lambda: os.path.exists(self.socket)
                          and any(n.startswith("sway-ipc.") for n in os.listdir(self.run)), 20):
            raise RuntimeError("sway did not start (see sway.log)")


class PortalChain:
    """A private session bus, PipeWire, WirePlumber, the permission store, xdg-desktop-portal-wlr
    (its chooser picks the first output without a dialog) and xdg-desktop-portal, as nobody."""

    def __init__(self, procs, sway):
        d = sway.dir
        self.bus = os.path.join(sway.run, "bus")
        with open(os.path.join(d, "bus.conf"), "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={self.bus}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow send_destination="*" eavesdrop="true"/>
<allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
""")
        chooser = os.path.join(d, "chooser")
        with open(chooser, "w") as f:
            f.write("#!/bin/sh\nhead -n 1\n")
        with open(os.path.join(d, "xdpw.conf"), "w") as f:
            f.write(f"[screencast]\nchooser_type=dmenu\nchooser_cmd={chooser}\nmax_fps=30\n")
        for name, mode in (("bus.conf", 0o644), ("chooser", 0o755), ("xdpw.conf", 0o644)):
            os.chmod(os.path.join(d, name), mode)
        self.home = os.path.join(d, "home")
        os.makedirs(self.home)
        os.chown(self.home, NOBODY, NOBODY)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "XDG_RUNTIME_DIR": sway.run,
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.bus}", "XDG_CURRENT_DESKTOP": "sway",
                    "WAYLAND_DISPLAY": "wayland-1"}
        procs.start(as_nobody(self.env) + ["dbus-daemon", f"--config-file={d}/bus.conf", "--nofork"], "dbus")
        if not wait_until(lambda: os.path.exists(self.bus), 10):
            raise RuntimeError("dbus-daemon did not start")
        procs.start(as_nobody(self.env) + ["pipewire"], "pipewire")
        if not wait_until(lambda: os.path.exists(os.path.join(sway.run, "pipewire-0")), 10):
            raise RuntimeError("pipewire did not start")
        procs.start(as_nobody(self.env) + ["wireplumber"], "wireplumber")
        procs.start(as_nobody(self.env) + ["/usr/libexec/xdg-permission-store"], "permission-store")
        procs.start(as_nobody({**self.env, "LD_PRELOAD": os.path.join(WORK, "screencopy-shm.so")})
                    + ["/usr/libexec/xdg-desktop-portal-wlr", "-c", f"{d}/xdpw.conf"], "xdpw")
        time.sleep(0.5)
        procs.start(as_nobody(self.env) + ["/usr/libexec/xdg-desktop-portal", "-r"], "xdp")
        probe = ["busctl", "--user", "get-property", "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                 "org.freedesktop.portal.ScreenCast", "AvailableSourceTypes"]
        if not wait_until(lambda: subprocess.run(probe, env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.bus}"},
                                                 capture_output=True).returncode == 0, 20, 0.2):
            raise RuntimeError("the portal did not come up (see xdpw.log, xdp.log)")


class Xvfb:
    def __init__(self, procs):
        read, write = os.pipe()
        p = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{SIZE[0]}x{SIZE[1]}x24",
                              "-nolisten", "tcp", "-noreset"], pass_fds=(write,),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.started.append(p)
        os.close(write)
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"


def picture(procs, sink, env, moving, name):
    """GStreamer's SMPTE bars over the whole screen: scrolling at 20 fps, or one picture kept
    (a second branch that never ends keeps the pipeline, and so the window, alive)."""
    caps = f"video/x-raw,width={SIZE[0]},height={SIZE[1]},framerate={FPS}/1"
    if moving:
        line = f"videotestsrc is-live=true pattern=smpte75 horizontal-speed=8 ! {caps} ! {sink}"
    else:
        line = (f"videotestsrc num-buffers=1 pattern=smpte75 ! {caps} ! {sink} "
                "videotestsrc is-live=true ! video/x-raw,width=16,height=16,framerate=1/1 ! fakesink")
    return procs.start(["gst-launch-1.0", "-q", *line.split()], name, env=env)


class Counter:
    """A socket the share sends to: when the first datagram came, and how many."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.first_at, self.count, self.done = None, 0, False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.done:
            try:
                self.sock.recv(65536)
            except socket.timeout:
                continue
            if self.first_at is None:
                self.first_at = time.monotonic()
            self.count += 1

    def close(self):
        self.done = True
        self.thread.join()
        self.sock.close()


def sample(pid):
    """(time, CPU seconds, context switches over all threads) of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        switches += int(line.split()[1])
        except FileNotFoundError:
            pass  # a thread that just ended
    return time.monotonic(), cpu, switches


def rates(a, b):
    span = b[0] - a[0]
    return round(100 * (b[1] - a[1]) / span, 1), round((b[2] - a[2]) / span, 1)


def smaps(pid):
    """Resident KiB per mapping name (anonymous ones together)."""
    out, name = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split(None, 5)
                name = parts[5].strip() if len(parts) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                out[name] = out.get(name, 0) + int(line.split()[1])
    return out


class Watch(threading.Thread):
    """Reads the sender's VmHWM (and, with --smaps, its mappings at each new high) until it exits."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.hwm_kib, self.peak_maps, self.peak_rss, self.done = pid, 0, None, 0, False
        self.start()

    def run(self):
        while not self.done:
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    text = f.read()
                self.hwm_kib = max(self.hwm_kib, int(re.search(r"VmHWM:\s+(\d+)", text).group(1)))
                rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
                if args.smaps and rss > self.peak_rss:
                    self.peak_rss, self.peak_maps = rss, smaps(self.pid)
            except (FileNotFoundError, ProcessLookupError, AttributeError, ValueError):
                pass  # gone, or a zombie
            time.sleep(0.005)


def plan_total(argv, env):
    text = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=WORK).stdout
    m = re.search(r"^\s*total\s+([0-9.]+) MiB", text, re.M)
    return float(m.group(1)) if m else None


def share_args(screen, port, sdp):
    output = ["--output", sdp[:-len(".sdp")] + ".ivf"] if args.to_file else ["--peer", f"127.0.0.1:{port}", "--sdp", sdp]
    return ["--source", screen["source"], *screen.get("extra", []), "--size", SHARE, "--fps", str(FPS), *output]


def small_change(procs, screen, name):
    """A 384x48 region at the top-left changing at 20 fps over a still picture; returns the
    processes that end the small change when killed (on X11 the still bars stay under it)."""
    if screen["source"].startswith("x11"):
        picture(procs, screen["sink"], screen.get("picture_env"), False, f"{name}-still")
        line = (f"videotestsrc is-live=true pattern=ball ! video/x-raw,width=384,height=48,framerate={FPS}/1 "
                f"! {screen['sink']}")
        return [procs.start(["gst-launch-1.0", "-q", *line.split()], f"{name}-small")]
    client = procs.start([os.path.join(WORK, "wayland-test-client"), "--share-width", SHARE.split("x")[0]],
                         f"{name}-small", env={**os.environ, "WAYLAND_DISPLAY": screen["socket"]})
    time.sleep(1)  # mapped and drawn whole first
    client.send_signal(signal.SIGHUP)
    return [client]


def source_counts(path):
    """(source frames, rows converted) of the share's newest --stats-json line."""
    try:
        with open(path) as f:
            lines = f.read().strip().splitlines()
        for line in reversed(lines):
            m, r = re.search(r'"source_frames":(\d+)', line), re.search(r'"source_rows":(\d+)', line)
            if m and r:
                return int(m.group(1)), int(r.group(1))
    except FileNotFoundError:
        pass
    return None


def measure(name, setup):
    """One source: its screen and picture up, the share started, a changing then a still phase."""
    procs = Processes()
    try:
        screen = setup(procs)
        prefix, env, sink, picture_env = screen.get("prefix", []), screen.get("env"), screen["sink"], screen.get("picture_env")
        sdp = os.path.join(screen.get("files", WORK), f"{name}.sdp")
        stats = os.path.join(screen.get("files", WORK), f"{name}-stats.jsonl")
        counter = Counter()
        command = prefix + [BIN] + share_args(screen, counter.port, sdp) + ["--stats-json", stats]
        planned = command[len(prefix) + 1:]
        planned = planned[:planned.index("--stats-json")]
        if args.to_file:  # `plan` takes no --output: a share without a transport is planned as one
            planned = planned[:planned.index("--output")] + planned[planned.index("--output") + 2:]
        plan = plan_total(prefix + [BIN, "plan"] + planned, env)
        moving = picture(procs, sink, picture_env, True, f"{name}-moving")
        time.sleep(1.5)  # the window is up before the share starts
        duration = 3 * SETTLE_S + 3 * args.phase_seconds + 2
        started = time.monotonic()
        sender = procs.start(command + ["--duration", str(int(duration))], f"{name}-share", env=env)
        watch = Watch(sender.pid)
        time.sleep(SETTLE_S)
        c0 = sample(sender.pid)
        time.sleep(args.phase_seconds)
        c1 = sample(sender.pid)
        moving.kill()
        moving.wait()
        small = small_change(procs, screen, name)
        time.sleep(SETTLE_S)
        m0, r0 = sample(sender.pid), source_counts(stats)
        time.sleep(args.phase_seconds)
        m1, r1 = sample(sender.pid), source_counts(stats)
        for p in small:
            p.kill()
            p.wait()
        if not name.startswith("x11"):
            picture(procs, sink, picture_env, False, f"{name}-still")
        time.sleep(SETTLE_S)
        s0 = sample(sender.pid)
        time.sleep(args.phase_seconds)
        s1 = sample(sender.pid)
        status = sender.wait(timeout=duration + 30)
        watch.done = True
        watch.join()
        counter.close()
        with open(os.path.join(WORK, f"{name}-share.log"), errors="replace") as f:
            tail = f.read().strip().splitlines()
        if status != 0:
            raise RuntimeError(f"the {name} share exited {status}: {tail[-3:]}")
        summary = next((l for l in reversed(tail) if " frames in " in l), "")
        source_frames = re.search(r"source (\d+) frames", summary)
        # Into a file there is no datagram to time (the file is written in blocks): no first frame.
        first_at = None if args.to_file else counter.first_at
        rows_per_picture = None
        if r0 and r1 and r1[0] > r0[0] and r1[1] > 0:
            rows_per_picture = round((r1[1] - r0[1]) / (r1[0] - r0[0]))
        row = {"source": name, "changing": rates(c0, c1), "small": rates(m0, m1), "rows": rows_per_picture,
               "still": rates(s0, s1),
               "first_frame_ms": None if first_at is None else round((first_at - started) * 1000),
               "hwm_mib": round(watch.hwm_kib / 1024, 1), "plan_mib": plan,
               "source_frames": int(source_frames.group(1)) if source_frames else None, "packets": counter.count}
        if args.smaps and watch.peak_maps:
            row["smaps"] = sorted(watch.peak_maps.items(), key=lambda kv: -kv[1])
        return row
    finally:
        procs.close()


def x11(procs):
    x = Xvfb(procs)
    return {"source": f"x11:{x.display}", "sink": f"ximagesink display={x.display}"}


def wayland(procs):
    sway = Sway(procs, "wayland")
    env = {**os.environ, "WAYLAND_DISPLAY": sway.socket}
    # waylandsink as root needs a runtime directory of its own for its shared memory.
    root_run = os.path.join(WORK, "root-run")
    os.makedirs(root_run, mode=0o700, exist_ok=True)
    return {"source": "wayland", "env": env, "sink": "waylandsink", "picture_env": {**env, "XDG_RUNTIME_DIR": root_run},
            "socket": sway.socket}


def portal(procs):
    sway = Sway(procs, "portal")
    chain = PortalChain(procs, sway)
    root_run = os.path.join(WORK, "root-run")
    os.makedirs(root_run, mode=0o700, exist_ok=True)
    # The share runs as nobody (the portal reads its caller's /proc): its token and SDP in nobody's home.
    return {"source": "portal", "extra": ["--portal-token-file", os.path.join(chain.home, "token")], "files": chain.home,
            "prefix": as_nobody(chain.env), "sink": "waylandsink", "socket": sway.socket,
            "picture_env": {**os.environ, "WAYLAND_DISPLAY": sway.socket, "XDG_RUNTIME_DIR": root_run}}


rows = []
for name, setup in (("x11", x11), ("wayland", wayland), ("portal", portal)):
    if args.only and name not in args.only:
        continue
    log(f"capture-cost: {name}")
    rows.append(measure(name, setup))

print(f"A {SIZE[0]}x{SIZE[1]} screen shared at {SHARE}@{FPS} (VP8, {'into an IVF file' if args.to_file else 'SRTP, loopback'}), "
      f"{args.phase_seconds:g} s per phase; "
      f"SMPTE bars scrolling at {FPS} fps, then a 384x48 region changing over a still picture, then held still.\n")
print("| source | changing: CPU % | changing: wake-ups/s | small: CPU % | small: wake-ups/s | small: rows/picture "
      "| still: CPU % | still: wake-ups/s | first frame ms | VmHWM MiB | plan MiB | plan − VmHWM |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    over = None if r["plan_mib"] is None else round(r["plan_mib"] - r["hwm_mib"], 1)
    print(f"| {r['source']} | {r['changing'][0]} | {r['changing'][1]} | {r['small'][0]} | {r['small'][1]} | {r['rows']} | "
          f"{r['still'][0]} | {r['still'][1]} | {r['first_frame_ms']} | {r['hwm_mib']} | {r['plan_mib']} | {over} |")
for r in rows:
    if "smaps" in r:
        print(f"\n{r['source']}: resident KiB per mapping at the peak")
        for k, v in r["smaps"][:20]:
            print(f"    {v:7d}  {k}")
PY
