"""The chart of a results file: per case, each sender's peak RSS and CPU side by side (medians,
with the runs' min–max as error bars); with the viewer's quality measured, per VP8 end-to-end
case the viewer's PSNR-Y beside the bytes on the wire, and the rate-quality curve (viewer PSNR-Y
against kbit/s on the wire, per sender). A `--only quality` results file gets the quality rows
alone. Needs matplotlib (Debian: python3-matplotlib).

    python3 chart.py RESULTS.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"rtcshare": "#1f77b4", "rtcshare-idle": "#6baed6", "ffmpeg": "#d62728", "gstreamer": "#2ca02c"}


def cases(summary):
    """(title, {sender: (rss spread, cpu spread)}) for each case."""
    for content, e in summary["e2e"].items():
        yield (f"end to end, {content} content",
               {s: (r["peak_rss_mib"], r["cpu_s_per_media_s"]) for s, r in e["senders"].items()})
    for phase in ("static", "changing"):
        yield (f"screen capture, {phase}",
               {s: (r["peak_rss_mib"], r[phase]["cpu_s_per_s"]) for s, r in summary["screen_capture"].items()})


def bars(ax, senders, index, ylabel, digits=None):
    names = [s for s in senders if senders[s][index]]
    med = [senders[s][index]["median"] for s in names]
    err = [[m - senders[s][index]["min"] for s, m in zip(names, med)],
           [senders[s][index]["max"] - m for s, m in zip(names, med)]]
    ax.bar(names, med, yerr=err, capsize=3, color=[COLOURS.get(s, "grey") for s in names])
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    for i, m in enumerate(med):
        d = digits if digits is not None else (1 if index == 0 else 3)
        ax.annotate(f"{m:.{d}f}", (i, m), ha="center", va="bottom", fontsize=7)


def quality_rows(q):
    """(title, {sender: (viewer PSNR spread, kB spread)}) per VP8 end-to-end case."""
    for content, e in (q.get("e2e") or {}).items():
        yield (f"viewer, {content} content", {s: (r["viewer_psnr_y"], r["wire_kbytes"]) for s, r in e["senders"].items()})


def curve(ax, q):
    for sender in ("rtcshare", "ffmpeg", "gstreamer"):
        points = []
        for kbps, c in q["curve"].items():
            row = c["senders"].get(sender)
            if row and row["mbit_per_s"] and row["viewer_psnr_y"]:
                points.append((row["mbit_per_s"]["median"] * 1000, row["viewer_psnr_y"]["median"], kbps))
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=sender,
                    color=COLOURS.get(sender, "grey"))
            for x, y, kbps in points:
                ax.annotate(f"{kbps}", (x, y), fontsize=6, textcoords="offset points", xytext=(3, -8))
    ax.set_xlabel("kbit/s on the wire (label: kbit/s asked)")
    ax.set_ylabel("viewer PSNR-Y (dB)")
    ax.set_title("rate-quality curve, 30 s desktop clip", fontsize=9, loc="left")
    ax.legend(fontsize=7)


def main():
    with open(sys.argv[1]) as f:
        result = json.load(f)
    only_quality = result.get("only") == "quality"
    q = result["summary"] if only_quality else (result["summary"].get("quality") or {})
    rows = [] if only_quality else list(cases(result["summary"]))
    qrows = list(quality_rows(q))
    total = len(rows) + len(qrows) + (1 if q.get("curve") else 0)
    fig, axes = plt.subplots(total, 2, figsize=(9, 2.6 * total), squeeze=False)
    for (title, senders), (mem_ax, cpu_ax) in zip(rows, axes):
        bars(mem_ax, senders, 0, "peak RSS (MiB)")
        bars(cpu_ax, senders, 1, "CPU s per s")
        mem_ax.set_title(title, fontsize=9, loc="left")
    for (title, senders), (psnr_ax, bytes_ax) in zip(qrows, axes[len(rows):]):
        bars(psnr_ax, senders, 0, "viewer PSNR-Y (dB)", digits=1)
        bars(bytes_ax, senders, 1, "kB on the wire", digits=0)
        psnr_ax.set_title(title, fontsize=9, loc="left")
    if q.get("curve"):
        curve(axes[-1][0], q)
        axes[-1][1].axis("off")
    fig.suptitle(f"rtcshare, ffmpeg, GStreamer — {result['started']} ({result['commit']}), "
                 f"{result['runs_count']} run(s), medians with min–max", fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
