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
    q = s.get("quality") or {}
    for content in ("screen", "busy"):
        rows = (q.get("e2e") or {}).get(content, {}).get("senders")
        if rows:
            out.append(f"| viewer PSNR-Y dB, {job}, {content} content | {cells(rows, 'viewer_psnr_y', 2)} |")
            out.append(f"| kB on the wire, {job}, {content} content, {settings['e2e_seconds']} s | "
                       f"{cells(rows, 'wire_kbytes', 0)} |")
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
    if q.get("targets"):
        qt = q["targets"]
        qmissed = [f"{t['name'].split(':')[0]}: {t['name'].split(':')[1].split(',')[0].strip()} "
                   f"({_median(t['figure'], 2)}, limit {t['target']})" for t in qt if t["met"] is False]
        facts.append(f"Targets (issue 25, what the viewer gets): {sum(1 for t in qt if t['met'])} of {len(qt)} met"
                     + (f"; missed: {'; '.join(qmissed)}." if qmissed else "."))
    out.append(" ".join(facts))
    return "\n".join(out) + "\n"


# ---- What the viewer gets (issue 25): the end-to-end VP8 cases' quality, the rate-quality
# curve, the board row. Ratios against the better of ffmpeg and GStreamer, taken within each run:
# the fewer bytes and the less CPU of the two, the higher viewer PSNR-Y.

QUALITY_METRICS = ("wire_kbytes", "mbit_per_s", "cpu_s_per_media_s", "psnr_y", "ssim_y", "viewer_psnr_y",
                   "viewer_frames_on_time", "frames_received", "frames_shown", "peak_rss_mib", "delay_ms_p50")


def _rows(got):
    return {m: spread([g.get(m) for g in got]) for m in QUALITY_METRICS}


def _versus_better(runs_rows, metric, higher_is_better=False, difference=False):
    """Per run: rtcshare's figure against the better reference's (ratio, or difference), then
    their spread."""
    values = []
    for rows in runs_rows:
        if "rtcshare" not in rows or rows["rtcshare"].get(metric) is None:
            continue
        theirs = [rows[p][metric] for p in PEERS if p in rows and rows[p].get(metric) is not None]
        if not theirs:
            continue
        best = max(theirs) if higher_is_better else min(theirs)
        values.append(rows["rtcshare"][metric] - best if difference else _ratio(rows["rtcshare"][metric], best))
    return spread(values)


def _target_at_least(s, name, figure, target):
    met = None if figure is None else figure["median"] >= target
    s["targets"].append({"name": name, "figure": figure, "target": target, "met": met, "at_least": True})


def summarize_quality(runs):
    s = {"e2e": {}, "curve": {}, "board": {}, "targets": []}
    for content in ("busy", "screen"):
        per_run = [r["e2e"][content] for r in runs if content in r.get("e2e", {})]
        if not per_run:
            continue
        s["e2e"][content] = {
            "senders": {snd: _rows([p[snd] for p in per_run if snd in p]) for snd in ("rtcshare", *PEERS)},
            "versus_better": {"bytes": _versus_better(per_run, "wire_kbytes"),
                              "cpu": _versus_better(per_run, "cpu_s_per_media_s"),
                              "viewer_psnr_db": _versus_better(per_run, "viewer_psnr_y", True, True),
                              "psnr_db": _versus_better(per_run, "psnr_y", True, True)}}
    # rtcshare asked for the rate that puts the references' bytes on the wire (bench/run,
    # matched_wire_cases), against the same run's references: pictures at the same cost.
    s["matched"] = {}
    for content in ("busy", "screen"):
        per_run = [{**{p: r["e2e"][content][p] for p in PEERS if p in r["e2e"].get(content, {})},
                    "rtcshare": r["e2e_matched"][content]["rtcshare"]}
                   for r in runs if content in (r.get("e2e_matched") or {})]
        if not per_run:
            continue
        s["matched"][content] = {
            "kbps_asked": spread([p["rtcshare"].get("kbps_asked") for p in per_run]),
            "rtcshare": _rows([p["rtcshare"] for p in per_run]),
            "versus_better": {"bytes": _versus_better(per_run, "wire_kbytes"),
                              "cpu": _versus_better(per_run, "cpu_s_per_media_s"),
                              "viewer_psnr_db": _versus_better(per_run, "viewer_psnr_y", True, True),
                              "psnr_db": _versus_better(per_run, "psnr_y", True, True)}}
    vb = {c: s["e2e"][c]["versus_better"] for c in s["e2e"]}
    if "screen" in vb:
        _target_at_least(s, "screen content: viewer PSNR-Y, rtcshare minus the better of ffmpeg and GStreamer (dB)",
                         vb["screen"]["viewer_psnr_db"], -0.5)
        _target(s, "screen content: bytes on the wire, rtcshare / the fewer of ffmpeg's and GStreamer's",
                vb["screen"]["bytes"], 1.0)
        _target(s, "screen content: CPU per media second, rtcshare / the lesser of ffmpeg's and GStreamer's",
                vb["screen"]["cpu"], 0.5)
    if "busy" in vb:
        _target_at_least(s, "busy content: viewer PSNR-Y, rtcshare minus the better of ffmpeg and GStreamer (dB)",
                         vb["busy"]["viewer_psnr_db"], -0.3)
        _target(s, "busy content: CPU per media second, rtcshare / the lesser of ffmpeg's and GStreamer's",
                vb["busy"]["cpu"], 0.7)
    for kbps in sorted({k for r in runs for k in (r.get("curve") or {})}, key=int):
        per_run = [r["curve"][kbps] for r in runs if kbps in (r.get("curve") or {})]
        s["curve"][kbps] = {
            "senders": {snd: _rows([p[snd] for p in per_run if snd in p]) for snd in ("rtcshare", *PEERS)},
            "versus_better": {"bytes": _versus_better(per_run, "wire_kbytes"),
                              "cpu": _versus_better(per_run, "cpu_s_per_media_s"),
                              "viewer_psnr_db": _versus_better(per_run, "viewer_psnr_y", True, True)}}
    for content in ("busy", "screen"):
        per_run = [r["board"][content] for r in runs if (r.get("board") or {}).get(content)]
        if not per_run:
            continue
        rows = {snd: _rows([p[snd] for p in per_run if snd in p]) for snd in ("rtcshare", *PEERS)}
        fed = per_run[0]["rtcshare"]["frames_fed"] if "rtcshare" in per_run[0] else None
        s["board"][content] = {"senders": rows, "frames_fed": fed}
        # Delivered: the source frames whose picture reached the viewer. A repeat of a still
        # picture that zero-hertz does not send again is shown by the frame before it; runs
        # without the analysis have only the frames the receiver decoded.
        kept = rows["rtcshare"]["frames_shown"] or rows["rtcshare"]["frames_received"]
        if kept and fed:
            _target_at_least(s, f"board row, {content} content: frames rtcshare delivered, share of those fed",
                             {k: (round(v / fed, 4) if k != "n" else v) for k, v in kept.items()}, 0.95)
    return s


def quality_problems(run):
    """A sender that failed or a receiver that got (almost) nothing, in the quality cases."""
    found = []
    # A thin rate makes every encoder drop frames to hold it: the curve only fails on (almost) nothing.
    for case, by_content, least in (("end to end", run.get("e2e", {}), 0.8), ("curve", run.get("curve") or {}, 0.25)):
        for content, e in by_content.items():
            for sender, v in e.items():
                if v["exit"] != 0 or v["frames_received"] < least * v["frames_fed"]:
                    found.append(f"{case} {content}/{sender}: exit {v['exit']}, "
                                 f"{v['frames_received']} of {v['frames_fed']} frames received")
                if v.get("quality_error"):
                    found.append(f"{case} {content}/{sender}: analysis failed: {v['quality_error']}")
    return [f"run {run['run']}: {p}" for p in found]


def _verdict(t):
    return "met" if t["met"] else ("**missed**" if t["met"] is False else "not measured")


def quality_tables(result, q):
    """The markdown tables of what the viewer got, from `summarize_quality`'s `q` (the quality
    run's summary, or the full run's summary["quality"])."""
    out = []
    seconds = result["settings"]["e2e_seconds"]
    if q.get("e2e"):
        out.append(f"**What the viewer got** — the end-to-end VP8 cases at {result['settings']['bitrate_kbps']} "
                   f"kbit/s, {seconds} s: every decoded frame matched to the frame fed by its marker (PSNR-Y, "
                   "SSIM-Y over 8x8 windows), and the viewer's PSNR-Y: at each source frame's feed time + 100 ms, "
                   "the newest frame decoded by then and not from later, against that source frame (so late, "
                   "dropped and frozen frames count). Bytes: SRTP on the wire.")
        out.append("")
        out.append("| content | sender | kB on the wire | PSNR-Y dB | SSIM-Y | viewer PSNR-Y dB | frames shown on time | "
                   "CPU s per media s | delay p50 ms |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for content, e in q["e2e"].items():
            for sender, row in e["senders"].items():
                out.append(f"| {content} | {sender} | {_fmt(row['wire_kbytes'], 0)} | {_fmt(row['psnr_y'], 2)} | "
                           f"{_fmt(row['ssim_y'], 4)} | {_fmt(row['viewer_psnr_y'], 2)} | "
                           f"{_fmt(row['viewer_frames_on_time'], 0)} of {seconds * 30} | "
                           f"{_fmt(row['cpu_s_per_media_s'], 3)} | {_fmt(row['delay_ms_p50'], 1)} |")
        out.append("")
        out.append("| content | rtcshare against the better of ffmpeg and GStreamer | bytes | CPU | viewer PSNR-Y | PSNR-Y |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for content, e in q["e2e"].items():
            v = e["versus_better"]
            out.append(f"| {content} | ratio, ratio, dB difference | {_fmt(v['bytes'])} | {_fmt(v['cpu'])} | "
                       f"{_fmt(v['viewer_psnr_db'])} | {_fmt(v['psnr_db'])} |")
        out.append("")
    if q.get("matched"):
        out.append("**At matched bytes on the wire** — rtcshare's --bitrate is the rate on the wire, so its encoder "
                   "is asked for that less what RTP and SRTP add, where ffmpeg's and GStreamer's encoders are asked "
                   "for the whole rate. rtcshare again, asked for the rate that puts the fewer bytes of the two on "
                   "the wire, against the same run's references (the targets above stay at the same asked rate):")
        out.append("")
        out.append("| content | kbit/s asked | bytes / the fewer | viewer PSNR-Y minus the better dB | "
                   "PSNR-Y minus the better dB | CPU / the lesser |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for content, m in q["matched"].items():
            v = m["versus_better"]
            out.append(f"| {content} | {_fmt(m['kbps_asked'], 0)} | {_fmt(v['bytes'])} | {_fmt(v['viewer_psnr_db'])} | "
                       f"{_fmt(v['psnr_db'])} | {_fmt(v['cpu'])} |")
        out.append("")
    if q.get("curve"):
        out.append("**Rate-quality curve** — the 30 s desktop clip (still stretches, typing, smooth scrolling, page "
                   "jumps, a menu; `harness/desktop_clip.py`), VP8 CBR at each rate, every sender:")
        out.append("")
        out.append("| kbit/s asked | sender | kbit/s on the wire | PSNR-Y dB | SSIM-Y | viewer PSNR-Y dB | CPU s per media s |")
        out.append("| --- | --- | --- | --- | --- | --- | --- |")
        for kbps, c in q["curve"].items():
            for sender, row in c["senders"].items():
                out.append(f"| {kbps} | {sender} | {_fmt(_times(row['mbit_per_s'], 1000), 0)} | "
                           f"{_fmt(row['psnr_y'], 2)} | {_fmt(row['ssim_y'], 4)} | {_fmt(row['viewer_psnr_y'], 2)} | "
                           f"{_fmt(row['cpu_s_per_media_s'], 3)} |")
        out.append("")
        out.append("| kbit/s asked | rtcshare / the better: bytes | CPU | viewer PSNR-Y difference dB |")
        out.append("| --- | --- | --- | --- |")
        for kbps, c in q["curve"].items():
            v = c["versus_better"]
            out.append(f"| {kbps} | {_fmt(v['bytes'])} | {_fmt(v['cpu'])} | {_fmt(v['viewer_psnr_db'])} |")
        out.append("")
    if q.get("board"):
        board = result["settings"].get("board", "half of one core")
        out.append(f"**Board row** — the same VP8 end-to-end jobs with each sender alone in a CPU cgroup ({board}): "
                   "frames delivered and what the viewer got.")
        out.append("")
        out.append("Frames shown: the source frames whose picture reached the viewer (a frame identical to "
                   "the one before it is shown by that one: zero-hertz does not send it again).")
        out.append("")
        out.append("| content | sender | frames received | frames shown | viewer PSNR-Y dB | frames shown on time | "
                   "CPU s per media s |")
        out.append("| --- | --- | --- | --- | --- | --- | --- |")
        for content, b in q["board"].items():
            for sender, row in b["senders"].items():
                out.append(f"| {content} | {sender} | {_fmt(row['frames_received'], 0)} of {b['frames_fed']} | "
                           f"{_fmt(row['frames_shown'], 0)} | "
                           f"{_fmt(row['viewer_psnr_y'], 2)} | {_fmt(row['viewer_frames_on_time'], 0)} | "
                           f"{_fmt(row['cpu_s_per_media_s'], 3)} |")
        out.append("")
    if q.get("targets"):
        out.append("**Targets** (issue 25; medians of the per-run figures)")
        out.append("")
        out.append("| target | measured (median) | limit | |")
        out.append("| --- | --- | --- | --- |")
        for t in q["targets"]:
            limit = f"≥ {t['target']}" if t.get("at_least") else f"≤ {t['target']}"
            out.append(f"| {t['name']} | {_fmt(t['figure'], 3)} | {limit} | {_verdict(t)} |")
        out.append("")
    return out


def _times(x, k):
    return None if x is None else {key: (v * k if key != "n" else v) for key, v in x.items()}


def quality_markdown(result):
    m = result["machine"]
    out = [f"`bench/run --only quality{' --quick' if result['quick'] else ''}` on {result['started']}, commit "
           f"{result['commit']}: {m['cpu']}, {m['cores']} cores, {m['kernel']}; {result['runs_count']} run(s), "
           "senders interleaved; medians with (min–max) over the runs. The machine is shared with other work: "
           "CPU is the sender's own CPU seconds (wait4), not wall time.", ""]
    out += quality_tables(result, result["summary"])
    out.append("Settings that differ between the senders:")
    out.append("")
    out += [f"- {d}" for d in result["differences"]]
    if result.get("problems"):
        out += ["", "**Problems in this run**: " + "; ".join(result["problems"]) + "."]
    if result.get("not_measured"):
        out += ["", "Not measured: " + "; ".join(result["not_measured"]) + "."]
    return "\n".join(out) + "\n"


def quality_headline(result):
    s, m = result["summary"], result["machine"]
    out = [f"What the viewer gets — `bench/run --only quality` on {result['started']}, commit {result['commit']}: "
           f"{m['cpu']}, {m['cores']} cores (shared); medians of {result['runs_count']} interleaved runs; every "
           "table: [bench/results/quality.md](bench/results/quality.md).", ""]
    out.append("| 1280x720@30, VP8, the same frames fed | rtcshare / the better of ffmpeg and GStreamer |")
    out.append("| --- | --- |")
    for content, e in s["e2e"].items():
        v, rows = e["versus_better"], e["senders"]
        out.append(f"| {content} content, 2500 kbit/s: viewer PSNR-Y (rtcshare {_median(rows['rtcshare']['viewer_psnr_y'], 1)} dB) "
                   f"| {_median(v['viewer_psnr_db'], 2)} dB |")
        out.append(f"| {content} content: bytes on the wire | {_median(v['bytes'], 2)}× |")
        out.append(f"| {content} content: CPU per media second | {_median(v['cpu'], 2)}× |")
    for kbps, c in s["curve"].items():
        v = c["versus_better"]
        out.append(f"| desktop clip (30 s) at {kbps} kbit/s: viewer PSNR-Y; bytes | {_median(v['viewer_psnr_db'], 2)} dB; "
                   f"{_median(v['bytes'], 2)}× |")
    out.append("")
    missed = [f"{t['name']} ({_median(t['figure'], 2)}, limit {t['target']})" for t in s["targets"] if t["met"] is False]
    out.append(f"Targets (issue 25): {sum(1 for t in s['targets'] if t['met'])} of {len(s['targets'])} met"
               + (f"; missed: {'; '.join(missed)}." if missed else "."))
    return "\n".join(out) + "\n"
