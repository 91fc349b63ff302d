"""From every run's figures to the summary: the median of each figure with its min and max,
the ratios rtcshare/ffmpeg and rtcshare/GStreamer taken within each run (then their median and
range), and the issue's targets marked met or missed. Also the markdown report."""
import statistics

PEERS = ("ffmpeg", "gstreamer")
SCREEN_SENDERS = ("rtcshare", "rtcshare-idle", "ffmpeg", "gstreamer")
WHIP_SENDERS = ("rtcshare", "gstreamer")


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "n": len(values)}


def _ratio(a, b):
    return None if a is None or not b else a / b


def summarize(runs):
    s = {"e2e": {}, "screen_capture": {}, "latency": {}, "packetize": None, "targets": []}
    # The end-to-end cases in the order they ran: the VP8 job (the targets), then its H.264 twin.
    contents = list(dict.fromkeys(c for r in runs for c in r["e2e"]))
    for content in contents:
        rows = {}
        for sender in ("rtcshare", *PEERS):
            got = [r["e2e"][content][sender] for r in runs if sender in r["e2e"].get(content, {})]
            rows[sender] = {m: spread([g.get(m) for g in got]) for m in
                            ("peak_rss_mib", "cpu_s_per_media_s", "frames_received", "mbit_per_s")}
        ratios = {}
        for metric in ("peak_rss_mib", "cpu_s_per_media_s"):
            per_peer = {}
            for peer in (*PEERS, "leaner"):
                values = []
                for r in runs:
                    e = r["e2e"].get(content, {})
                    if "rtcshare" not in e:
                        continue
                    if peer == "leaner":
                        theirs = [e[p][metric] for p in PEERS if p in e]
                        values.append(_ratio(e["rtcshare"][metric], min(theirs) if theirs else None))
                    elif peer in e:
                        values.append(_ratio(e["rtcshare"][metric], e[peer][metric]))
                per_peer[peer] = spread(values)
            ratios[metric] = per_peer
        s["e2e"][content] = {"senders": rows, "ratios": ratios}
        if "H.264" in content:
            continue  # reported beside the VP8 job; the targets are about VP8
        _target(s, f"peak RSS, {content} content: rtcshare / the leaner of ffmpeg and GStreamer",
                ratios["peak_rss_mib"]["leaner"], 0.75)
        _target(s, f"CPU per media second, {content} content: rtcshare / the better of ffmpeg and GStreamer",
                ratios["cpu_s_per_media_s"]["leaner"], 0.7)

    sc = {}
    for sender in SCREEN_SENDERS:
        got = [r["screen_capture"][sender] for r in runs if sender in r.get("screen_capture", {})]
        if not got:
            continue
        sc[sender] = {"peak_rss_mib": spread([g["peak_rss_mib"] for g in got]),
                      "first_packet_ms": spread([g["first_packet_ms"] for g in got])}
        for phase in ("static", "changing"):
            sc[sender][phase] = {m: spread([g[phase][m] for g in got])
                                 for m in ("cpu_s_per_s", "wakeups_per_s", "mbit_per_s")}
    s["screen_capture"] = sc
    for ours in ("rtcshare", "rtcshare-idle"):
        for phase, target in (("static", 0.5), ("changing", 0.7)):
            values = []
            for r in runs:
                c = r.get("screen_capture", {})
                theirs = [c[p][phase]["cpu_s_per_s"] for p in PEERS if p in c]
                if ours in c and theirs:
                    values.append(_ratio(c[ours][phase]["cpu_s_per_s"], min(theirs)))
            _target(s, f"CPU per second, {phase} screen: {ours} / the better of ffmpeg and GStreamer",
                    spread(values), target)

    # WHIP: rtcshare and GStreamer (webrtcbin) into the aiortc server; a run's rows by sender
    # (an older run's single row is rtcshare's).
    whip = [w if "exit" not in w else {"rtcshare": w} for w in (r.get("whip") for r in runs) if w]
    if whip:
        rows = {}
        for sender in WHIP_SENDERS:
            got = [w[sender] for w in whip if sender in w]
            if got:
                rows[sender] = {m: spread([g.get(m) for g in got]) for m in
                                ("peak_rss_mib", "cpu_s_per_media_s", "frames_received")}
        ratios = {m: spread([_ratio(w["rtcshare"][m], w["gstreamer"][m]) for w in whip
                             if "rtcshare" in w and "gstreamer" in w])
                  for m in ("peak_rss_mib", "cpu_s_per_media_s")}
        s["whip"] = {"senders": rows, "ratios": ratios}
    else:
        s["whip"] = None

    lat = [r["latency"] for r in runs if r.get("latency")]
    s["latency"] = {m: spread([l.get(m) for l in lat]) for m in
                    ("latency_p50_ms", "latency_p99_ms", "frames_received", "peak_rss_mib", "cpu_s")}
    _target(s, "glass-to-glass latency p50 (ms), 1280x720@20, loopback", s["latency"]["latency_p50_ms"], 50)
    _target(s, "glass-to-glass latency p99 (ms), 1280x720@20, loopback", s["latency"]["latency_p99_ms"], 100)

    s["packetize"] = {}
    for r in runs:
        for line in r.get("packetize", []):
            s["packetize"].setdefault(line["input"], {"detail": line["detail"], "lines": []})["lines"].append(line)
    for name, p in s["packetize"].items():
        for m in ("ours_ns_per_packet", "libsrtp_ns_per_packet", "ratio_vs_libsrtp"):
            p[m] = spread([line[m] for line in p["lines"]])
        del p["lines"]
        _target(s, f"packetize + protect, {name}: RTPSender / raw libsrtp2 protect", p["ratio_vs_libsrtp"], 1.2)
    return s


def _target(s, name, figure, target):
    met = None if figure is None else figure["median"] <= target
    s["targets"].append({"name": name, "figure": figure, "target": target, "met": met})


def _fmt(x, digits=2):
    if x is None:
        return "–"
    if x["min"] == x["max"]:
        return f"{x['median']:.{digits}f}"
    return f"{x['median']:.{digits}f} ({x['min']:.{digits}f}–{x['max']:.{digits}f})"


def markdown(result):
    s = result["summary"]
    out = []
    m = result["machine"]
    out.append(f"`bench/run{' --quick' if result['quick'] else ''}` on {result['started']}, commit "
               f"{result['commit']}: {m['cpu']}, {m['cores']} cores, {m['kernel']}; {result['runs_count']} "
               "run(s), senders interleaved; medians with (min–max) over the runs. Ratios are taken within "
               "each run, then their median.")
    out.append("")
    out.append(f"**End to end** — the same YUV4MPEG2 frames on stdin (a separate feeder), 1280x720@30, "
               f"VP8 realtime CBR {result['settings']['bitrate_kbps']} kbit/s, SRTP AES_CM_128_HMAC_SHA1_80 "
               f"to `rtcshare receive` on loopback, {result['settings']['e2e_seconds']} s of media. The (H.264) "
               "rows run the same job in H.264 (payload type 102, FU-A): rtcshare and GStreamer with openh264, "
               "ffmpeg with libx264 (its build has no openh264 encoder) — reported, not held to the targets.")
    out.append("")
    out.append("| content | sender | peak RSS MiB | CPU s per media s | frames received | Mbit/s on the wire |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for content, e in s["e2e"].items():
        for sender, row in e["senders"].items():
            out.append(f"| {content} | {sender} | {_fmt(row['peak_rss_mib'], 1)} | "
                       f"{_fmt(row['cpu_s_per_media_s'], 3)} | {_fmt(row['frames_received'], 0)} of "
                       f"{result['settings']['e2e_seconds'] * 30} | {_fmt(row['mbit_per_s'], 2)} |")
    out.append("")
    out.append("| content | ratio | peak RSS | CPU |")
    out.append("| --- | --- | --- | --- |")
    for content, e in s["e2e"].items():
        for peer in ("ffmpeg", "gstreamer", "leaner"):
            label = "rtcshare / the leaner of the two" if peer == "leaner" else f"rtcshare / {peer}"
            out.append(f"| {content} | {label} | {_fmt(e['ratios']['peak_rss_mib'][peer])} | "
                       f"{_fmt(e['ratios']['cpu_s_per_media_s'][peer])} |")
    out.append("")
    if s.get("whip"):
        w, fed = s["whip"], result["settings"]["e2e_seconds"] * 30
        out.append("**WHIP** — the screen-content job published over WHIP into the aiortc WHIP server (ICE, "
                   "DTLS-SRTP; aiortc decodes on the same cores): rtcshare `--whip`, and GStreamer's webrtcbin "
                   "(`harness/gst_whip_sender.py`: the end-to-end case's vp8enc settings, driven from Debian's "
                   "Python, whose interpreter is counted in its row). No ffmpeg row (see below).")
        out.append("")
        out.append("| sender | peak RSS MiB | CPU s per media s | frames decoded |")
        out.append("| --- | --- | --- | --- |")
        for sender, row in w["senders"].items():
            out.append(f"| {sender} | {_fmt(row['peak_rss_mib'], 1)} | {_fmt(row['cpu_s_per_media_s'], 3)} | "
                       f"{_fmt(row['frames_received'], 0)} of {fed} |")
        if w["ratios"]["peak_rss_mib"]:
            out.append(f"| rtcshare / gstreamer | {_fmt(w['ratios']['peak_rss_mib'])} | "
                       f"{_fmt(w['ratios']['cpu_s_per_media_s'])} | |")
        out.append("")
    out.append(f"**Screen capture** — Xvfb 1920x1080 shared at 1280x720@30, {result['settings']['phase_seconds']} s "
               "static, then the same picture scrolling; per second of each phase. `rtcshare-idle` adds "
               f"`--idle-fps {result['settings']['idle_fps']}`.")
    out.append("")
    out.append("| sender | peak RSS MiB | first packet ms | static: CPU s/s | wake-ups/s | Mbit/s | "
               "changing: CPU s/s | wake-ups/s | Mbit/s |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for sender, row in s["screen_capture"].items():
        st, ch = row["static"], row["changing"]
        out.append(f"| {sender} | {_fmt(row['peak_rss_mib'], 1)} | {_fmt(row['first_packet_ms'], 0)} | "
                   f"{_fmt(st['cpu_s_per_s'], 3)} | {_fmt(st['wakeups_per_s'], 0)} | {_fmt(st['mbit_per_s'], 2)} | "
                   f"{_fmt(ch['cpu_s_per_s'], 3)} | {_fmt(ch['wakeups_per_s'], 0)} | {_fmt(ch['mbit_per_s'], 2)} |")
    out.append("")
    lat = s["latency"]
    out.append(f"**Latency** — rtcshare's test source at 1280x720@20 to the built-in receiver on loopback: "
               f"glass-to-glass p50 {_fmt(lat['latency_p50_ms'], 1)} ms, p99 {_fmt(lat['latency_p99_ms'], 1)} ms "
               f"({_fmt(lat['frames_received'], 0)} frames). Start to first media packet: the screen-capture "
               "table's first-packet column.")
    out.append("")
    for name, p in s["packetize"].items():
        out.append(f"**Packetize + protect**, {name} — {p['detail']}: {_fmt(p['ours_ns_per_packet'], 0)} ns "
                   f"per packet against {_fmt(p['libsrtp_ns_per_packet'], 0)} ns, ratio {_fmt(p['ratio_vs_libsrtp'], 3)}.")
        out.append("")
    pixel = result["micro"]["pixel"]
    if pixel:
        missed = [f"{l['op']} {l['size']} ({l['ratio_vs_libyuv']:.2f}, {l['ratio_vs_memcpy']:.2f}× memcpy)"
                  for l in pixel if not l["met"]]
        out.append(f"**Pixel transforms** (`bench/run-micro.sh`, CCore against libyuv, medians of "
                   f"{pixel[0]['runs']} runs): {len(pixel) - len(missed)} of {len(pixel)} operations meet "
                   f"their target" + (f"; missed: {', '.join(missed)}." if missed else "."))
        out.append("")
    out.append("**Targets** (issue 11)")
    out.append("")
    out.append("| target | measured (median) | limit | |")
    out.append("| --- | --- | --- | --- |")
    for t in s["targets"]:
        verdict = "met" if t["met"] else ("**missed**" if t["met"] is False else "not measured")
        out.append(f"| {t['name']} | {_fmt(t['figure'], 3)} | ≤ {t['target']} | {verdict} |")
    out.append("")
    out.append("Settings that differ between the senders:")
    out.append("")
    for d in result["differences"]:
        out.append(f"- {d}")
    if result.get("problems"):
        out.append("")
        out.append("**Problems in this run**: " + "; ".join(result["problems"]) + ".")
    if result.get("not_measured"):
        out.append("")
        out.append("Not measured: " + "; ".join(result["not_measured"]) + ".")
    return "\n".join(out) + "\n"


def _median(x, digits):
    return "–" if x is None else f"{x['median']:.{digits}f}"


def headline(result):
    """The few figures the top-level README shows between its bench markers, with a link to
    latest.md, which holds every table."""
    s, m, settings = result["summary"], result["machine"], result["settings"]
    out = [f"Latest full run, `bench/run` on {result['started']}, commit {result['commit']}: {m['cpu']}, "
           f"{m['cores']} cores; medians of {result['runs_count']} run(s), senders interleaved. Every table "
           "(with min–max), the settings that differ between the senders and what was not measured: "
           "[bench/results/latest.md](bench/results/latest.md); every run's figures: `bench/results/latest.json`.",
           ""]
    out.append("| 1280x720, the same job in the same run | rtcshare | ffmpeg | GStreamer |")
    out.append("| --- | --- | --- | --- |")

    def cells(rows, metric, digits):
        return " | ".join(_median((rows.get(sender) or {}).get(metric), digits)
                          for sender in ("rtcshare", *PEERS))

    job = f"VP8 {settings['bitrate_kbps']} kbit/s over SRTP"
    for content, metric, label, digits in (("busy", "peak_rss_mib", "peak RSS MiB", 1),
                                           ("busy", "cpu_s_per_media_s", "CPU s per media s", 3),
                                           ("screen", "cpu_s_per_media_s", "CPU s per media s", 3)):
        e = s["e2e"].get(content)
        if e:
            out.append(f"| {label}, {job}, {content} content | {cells(e['senders'], metric, digits)} |")
    if s.get("whip"):
        w = s["whip"]["senders"]
        out.append(f"| peak RSS MiB, screen content over WHIP into aiortc | "
                   f"{_median((w.get('rtcshare') or {}).get('peak_rss_mib'), 1)} | no WHIP muxer | "
                   f"{_median((w.get('gstreamer') or {}).get('peak_rss_mib'), 1)} |")
    sc = s["screen_capture"]
    for phase in ("static", "changing"):
        rows = {sender: v[phase] for sender, v in sc.items()}
        ours = _median((rows.get("rtcshare") or {}).get("cpu_s_per_s"), 3)
        if "rtcshare-idle" in rows and phase == "static":
            ours += f" ({_median(rows['rtcshare-idle']['cpu_s_per_s'], 3)} with `--idle-fps {settings['idle_fps']}`)"
        theirs = " | ".join(_median((rows.get(p) or {}).get("cpu_s_per_s"), 3) for p in PEERS)
        out.append(f"| CPU s per s, an X11 screen ({phase}) | {ours} | {theirs} |")
    out.append("")

    lat = s["latency"]
    facts = [f"Glass-to-glass latency p50 {_median(lat['latency_p50_ms'], 1)} ms, p99 "
             f"{_median(lat['latency_p99_ms'], 1)} ms (1280x720@20, loopback)."]
    if s["packetize"]:
        ratios = ", ".join(f"{name} {_median(p['ratio_vs_libsrtp'], 2)}" for name, p in s["packetize"].items())
        facts.append(f"Packetize + protect (`RTPSender`) against raw libsrtp2 protect, time per packet: {ratios}.")
    if result.get("planner"):
        within = sum(1 for r in result["planner"] if r["within"])
        facts.append(f"`rtcshare plan`: {within} of {len(result['planner'])} configurations within 1 MiB "
                     "of their measured peak.")
    targets = s["targets"]
    missed = [f"{t['name'].split(':')[0]} ({_median(t['figure'], 2)}, limit {t['target']})"
              for t in targets if t["met"] is False]
    facts.append(f"Targets (issue 11): {sum(1 for t in targets if t['met'])} of {len(targets)} met"
                 + (f"; missed: {'; '.join(missed)}." if missed else "."))
    out.append(" ".join(facts))
    return "\n".join(out) + "\n"
