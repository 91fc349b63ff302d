"""The chart of a results file: per case, each sender's peak RSS and CPU side by side (medians,
with the runs' min–max as error bars). Needs matplotlib (Debian: python3-matplotlib).

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


def bars(ax, senders, index, ylabel):
    names = [s for s in senders if senders[s][index]]
    med = [senders[s][index]["median"] for s in names]
    err = [[m - senders[s][index]["min"] for s, m in zip(names, med)],
           [senders[s][index]["max"] - m for s, m in zip(names, med)]]
    ax.bar(names, med, yerr=err, capsize=3, color=[COLOURS.get(s, "grey") for s in names])
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    for i, m in enumerate(med):
        ax.annotate(f"{m:.1f}" if index == 0 else f"{m:.3f}", (i, m), ha="center", va="bottom", fontsize=7)


def main():
    with open(sys.argv[1]) as f:
        result = json.load(f)
    rows = list(cases(result["summary"]))
    fig, axes = plt.subplots(len(rows), 2, figsize=(9, 2.6 * len(rows)), squeeze=False)
    for (title, senders), (mem_ax, cpu_ax) in zip(rows, axes):
        bars(mem_ax, senders, 0, "peak RSS (MiB)")
        bars(cpu_ax, senders, 1, "CPU s per s")
        mem_ax.set_title(title, fontsize=9, loc="left")
    fig.suptitle(f"rtcshare, ffmpeg, GStreamer — {result['started']} ({result['commit']}), "
                 f"{result['runs_count']} run(s), medians with min–max", fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
