"""Where a sender's CPU goes in the end-to-end case: the same job as harness/e2e_case.py (the
clip fed on standard input at 30 fps, VP8 CBR over SRTP to `rtcshare receive` on loopback),
with the sender run under `perf record` (cpu-clock samples of the sender alone), and the samples
summed into groups: reading the input, rtcshare's change map, libvpx by what its functions do,
RTP/SRTP, the kernel's share. Prints milliseconds of CPU per group and the top functions.

    python3 profile_case.py SENDER CLIP.y4m BINARY [--kbps 2500] [--seconds 10] [--top 25]

SENDER is rtcshare, ffmpeg or gstreamer; BINARY is rtcshare (it is the receiver for all three).
Needs `perf` (Debian's linux-perf). Debian's libvpx has no symbols and its debug package is not
in the main archive: for libvpx's functions by name, build the same release (1.12.0) with
`--enable-shared --extra-cflags=-g` and set LIBVPX_DIR to the folder holding its libvpx.so.7
(each sender then loads it; without it libvpx's samples are one group of addresses)."""
import argparse
import base64
import collections
import os
import re
import subprocess
import sys

import e2e_case
from builtin_receiver import BuiltinReceiver

HERE = os.path.dirname(os.path.abspath(__file__))
HZ = 4000

# (group, pattern on the function's name), first match wins; libvpx's VP8 encoder by stage.
VPX_GROUPS = [
    ("libvpx: loop filter and its level search", r"loop_?filter|lf_|filter_level|pick_filter|calc_ss_err|yv12_copy_y"),
    ("libvpx: source copy into the lookahead, border extension", r"copy_and_extend|lookahead|extend_plane|extend_frame"),
    ("libvpx: macroblock copies (source to scratch, skipped blocks' prediction)", r"copy_mem"),
    ("libvpx: mode decision and motion search", r"variance|sad|mse|pick_inter|pick_intra|evaluate_inter|near_mv|mv_ref|"
                                                r"search|skin|dot_artifact|get4x4|cost|sub_pixel"),
    ("libvpx: tokens and boolean coder", r"encode_bool|pack_|write_|tree_|token|bitstream"),
    ("libvpx: transform, quantizer, reconstruction", r"fdct|quant|idct|subtract|recon|predict|encode_inter_macroblock|"
                                                     r"encode_intra|build_inter|intra"),
    ("libvpx: frame and row driver, rate control", r"encode_mb_row|encode_frame|vp8cx_|setup|ratectrl|rc_|init"),
]
KERNEL_GROUPS = [
    ("kernel: reading the pipe", r"pipe|copy_to_iter|copy_page_to_iter"),
    ("kernel: scheduling, wake-ups", r"sched|switch|spin_unlock|futex|hrtimer|wake|ttwu|poll|nanosleep"),
    ("kernel: page faults, frees", r"fault|page|folio|uncharge|charge|lru|zap|tlb|alloc|free"),
    ("kernel: UDP send", r"udp|ip_|sock|skb|net|loopback|dev_"),
]


def group(dso, sym):
    if dso.startswith("libvpx"):
        for name, pattern in VPX_GROUPS:
            if re.search(pattern, sym):
                return name
        return "libvpx: other"
    if dso == "[kernel.kallsyms]":
        for name, pattern in KERNEL_GROUPS:
            if re.search(pattern, sym):
                return name
        return "kernel: other"
    if dso.startswith("rtcshare"):
        if "change" in sym:
            return "rtcshare: change map"
        return "rtcshare: the rest (pacer, RTP, session)"
    if re.match(r"lib(srtp|crypto|softokn|freebl)", dso):
        return "RTP/SRTP: protect (libsrtp2, NSS, OpenSSL)"
    if dso.startswith("libc."):
        return "libc: " + ("memcpy, memmove, memset" if "mem" in sym else "other")
    if dso.startswith("ld-linux"):
        return "start-up: dynamic linking"
    return "the sender's own libraries: " + dso


def summarize(data, top):
    text = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True,
                          check=True).stdout
    groups, funcs = collections.Counter(), collections.Counter()
    for line in text.splitlines():
        head, _, dso = line.strip().rpartition("(")
        fields = head.split(None, 1)
        sym = re.sub(r"\+0x[0-9a-f]+$", "", fields[1].strip()) if len(fields) > 1 else "?"
        dso = os.path.basename(dso.rstrip(")"))
        g = group(dso, sym)
        groups[g] += 1
        funcs[(dso, sym)] += 1
    total = sum(groups.values())
    print(f"{total * 1000 / HZ:.0f} ms of CPU sampled")
    for name, n in groups.most_common():
        print(f"  {n * 1000 / HZ:7.0f} ms {100 * n / total:5.1f} %  {name}")
    print(f"top {top} functions:")
    for (dso, sym), n in funcs.most_common(top):
        print(f"  {n * 1000 / HZ:7.0f} ms  {dso[:24]:24} {sym[:80]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sender", choices=["rtcshare", "ffmpeg", "gstreamer"])
    ap.add_argument("clip")
    ap.add_argument("binary")
    ap.add_argument("--kbps", type=int, default=2500)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", default=None, help="where perf.data goes (default: a temporary file)")
    a = ap.parse_args()
    data = a.out or f"/tmp/rtcshare-profile-{os.getpid()}.data"
    key = base64.b64encode(os.urandom(30)).decode()
    port = 30000 + os.getpid() % 1000 * 2
    env = dict(os.environ)
    if os.environ.get("LIBVPX_DIR"):
        env["LD_LIBRARY_PATH"] = os.environ["LIBVPX_DIR"]
    receiver = BuiltinReceiver(a.binary, port, key)
    feeder = subprocess.Popen([sys.executable, os.path.join(HERE, "feeder.py"), a.clip, "30", str(a.seconds * 30)],
                              stdout=subprocess.PIPE)
    sender = e2e_case.command(a.sender, a.binary, port, key, 30, "vp8", a.kbps)
    perf = subprocess.Popen(["perf", "record", "-q", "-F", str(HZ), "-o", data, "--", *sender], stdin=feeder.stdout,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    feeder.stdout.close()
    perf.wait()
    feeder.wait()
    receiver.finish()
    if perf.returncode != 0:
        sys.exit(f"profile_case: perf record exited {perf.returncode}")
    summarize(data, a.top)
    if not a.out:
        os.remove(data)


if __name__ == "__main__":
    main()
