#!/usr/bin/env bash
# Loss recovery through an impaired network, with real processes: `rtcshare --peer` (1280x720 at
# 20 fps, VP8, with the Opus test tone) → `rtcshare-relay` (seeded loss and delay, both ways,
# video and audio) → `rtcshare receive`. One JSON line per scenario:
#
#   random5_rtt40    5 % random loss, 20 ms each way
#   bursty2_rtt100   2 % bursty loss (Gilbert-Elliott, mean burst 5), 50 ms each way
#
#   bench/run-network.sh            60 s a scenario
#   DURATION=15 bench/run-network.sh   a quicker run
#
# Figures: frames decoded (receiver's decoded frames / sender's encoded frames), the longest
# freeze (longest gap between two decoded frames), video packets NACKed and recovered (receiver),
# datagrams the relay lost on the way to the receiver (video, audio and RTCP), video bytes
# retransmitted (sender) against video bytes lost (receiver: packets that went missing x mean
# packet size; the relay's count for all streams beside it), glass-to-glass latency p50/p99
# (frame marker). Targets:
# random5_rtt40 ≥ 99 % decoded, no freeze > 200 ms; bursty2_rtt100 ≥ 95 % of the NACKed packets
# recovered, no freeze > 500 ms; both retransmitted ≤ 1.5 × lost bytes. Binaries: the release
# build (BIN_DIR= to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${DURATION:-60}"
work="${TMPDIR:-/tmp}/rtcshare-network"
mkdir -p "$work"
if [ -z "${BIN_DIR:-}" ]; then
    swift build -c release --static-swift-stdlib --product rtcshare --scratch-path .build-release -j 2 >&2
    swift build -c release --static-swift-stdlib --product rtcshare-relay --scratch-path .build-release -j 2 >&2
    BIN_DIR="$(swift build -c release --static-swift-stdlib --scratch-path .build-release --show-bin-path)"
fi
bin="$BIN_DIR/rtcshare"
relay="$BIN_DIR/rtcshare-relay"
key=$(head -c 30 /dev/urandom | base64)

# scenario NAME RELAY-OPTIONS...
scenario() {
    local name="$1"; shift
    local port=$(( 30000 + (RANDOM % 8000) * 4 ))
    local rx_port=$port front=$((port + 10))
    rm -f "$work/$name".*
    "$bin" receive --listen "127.0.0.1:$rx_port" --srtp-key "$key" --stats-json "$work/$name.rx.json" \
        --idle-timeout 3 >"$work/$name.rx.log" 2>&1 &
    local rx=$!
    "$relay" --listen "127.0.0.1:$front" --forward "127.0.0.1:$rx_port" \
        --listen "127.0.0.1:$((front + 2))" --forward "127.0.0.1:$((rx_port + 2))" "$@" \
        >"$work/$name.relay.json" 2>"$work/$name.relay.log" &
    local rl=$!
    sleep 0.5
    "$bin" "${sender_args[@]}" --size 1280x720 --fps 20 --audio testtone \
        --peer "127.0.0.1:$front" --audio-peer "127.0.0.1:$((front + 2))" --srtp-key "$key" \
        --duration "$duration" --stats-json "$work/$name.tx.jsonl" <"${sender_stdin:-/dev/null}" >"$work/$name.tx.log" 2>&1 || {
        echo "bench: $name: the sender failed:" >&2; tail -5 "$work/$name.tx.log" >&2; }
    wait "$rx" || { echo "bench: $name: the receiver failed:" >&2; tail -5 "$work/$name.rx.log" >&2; }
    kill -TERM "$rl"; wait "$rl" || true
    python3 - "$name" "$work/$name" <<'PY'
import json, sys
name, base = sys.argv[1], sys.argv[2]
rx = json.load(open(base + ".rx.json"))
tx = [json.loads(l) for l in open(base + ".tx.jsonl") if l.strip()][-1]
relay = {d["direction"]: d for d in (json.loads(l) for l in open(base + ".relay.json") if l.strip())}
down = relay["to-receiver"]
import re
# The sender's summary line counts every frame encoded ("rtcshare: N frames in S s").
summary = re.search(r"rtcshare: (\d+) frames in", open(base + ".tx.log").read())
frames_sent = int(summary.group(1)) if summary else tx["frames"]
sent = max(1, frames_sent)
nacked = rx["packets_nacked"]
out = {
    "scenario": name,
    "frames_sent": frames_sent, "frames_decoded": rx["frames"],
    "frames_decoded_pct": round(100.0 * rx["frames"] / sent, 2),
    "longest_freeze_ms": rx["longest_freeze_ms"], "freezes_over_200ms": rx["freezes"],
    "datagrams_lost_by_relay": down["lost"], "packets_nacked": nacked,
    "packets_recovered": rx["packets_recovered"], "packets_given_up": rx["packets_lost"],
    "recovered_pct": round(100.0 * rx["packets_recovered"] / nacked, 2) if nacked else None,
    "plis": rx["plis"],
    "retransmitted_bytes": tx.get("retransmitted_bytes"), "video_lost_bytes": rx["bytes_lost_estimate"],
    "all_lost_bytes": down["bytes_lost"],
    "retransmitted_over_lost": round(tx.get("retransmitted_bytes", 0) / max(1, rx["bytes_lost_estimate"]), 3),
    "retransmits_suppressed": tx.get("retransmits_suppressed"),
    "retransmits_over_budget": tx.get("retransmits_over_budget"),
    "latency_p50_ms": rx["latency_p50_ms"], "latency_p99_ms": rx["latency_p99_ms"],
    "rtt_ms": tx.get("rtt_ms"), "nack_rtt_ms": rx.get("nack_rtt_ms"), "nack_rtt_var_ms": rx.get("nack_rtt_var_ms"),
}
if name.startswith("bottleneck"):
    # Per second from the sender: when its sent rate and target first went under the cap.
    lines = [json.loads(l) for l in open(base + ".tx.jsonl") if l.strip()]
    under = next((l["t"] for l in lines if l.get("kbps", 1e9) < 1000 and l.get("target_kbps", 1e9) < 1000), None)
    out["under_cap_at_s"] = under
    out["sent_kbps_per_second"] = [l.get("kbps") for l in lines]
    out["target_kbps_per_second"] = [l.get("target_kbps") for l in lines]
    out["bottleneck_tail_dropped"] = down.get("tail_dropped")
    out["bottleneck_forwarded"] = down.get("forwarded")
    out["queue_delay_ms"] = {k: down.get(k) for k in ("queue_delay_p50_ms", "queue_delay_p99_ms", "queue_delay_max_ms")}
    out["target"] = "under the cap within 3 s; then bottleneck loss < 2 %, queueing delay < 150 ms, no freeze > 500 ms (loss and delay here are over the whole run, start included)"
    dropped, fwd = down.get("tail_dropped") or 0, down.get("forwarded") or 0
    out["bottleneck_loss_pct"] = round(100.0 * dropped / max(1, dropped + fwd), 2)
    out["met"] = under is not None and under <= 3 and rx["longest_freeze_ms"] <= 500
elif name.startswith("random5"):
    out["target"] = ">= 99 % decoded, no freeze > 200 ms, retransmitted <= 1.5 x lost"
    out["met"] = out["frames_decoded_pct"] >= 99 and rx["longest_freeze_ms"] <= 200 and out["retransmitted_over_lost"] <= 1.5
else:
    out["target"] = ">= 95 % recovered, no freeze > 500 ms, retransmitted <= 1.5 x lost"
    out["met"] = (out["recovered_pct"] or 0) >= 95 and rx["longest_freeze_ms"] <= 500 and out["retransmitted_over_lost"] <= 1.5
print(json.dumps(out))
PY
}

# SCENARIOS="random5_rtt40" runs only those named.
only="${SCENARIOS:-random5_rtt40 bursty2_rtt100 bottleneck1m}"
sender_args=(--source testsrc)
case " $only " in *" random5_rtt40 "*) scenario random5_rtt40 --seed 5 --loss 5 --delay 20 --back-delay 20 ;; esac
case " $only " in *" bursty2_rtt100 "*)
    scenario bursty2_rtt100 --seed 2 --burst-loss 2 --burst-length 5 --delay 50 --back-delay 50 ;; esac
# A 1 Mbit/s bottleneck (250 ms of queue) from a 2.5 Mbit/s start, busy moving content (ffmpeg's
# mandelbrot zoom, made live), 20 ms each way.
case " $only " in *" bottleneck1m "*)
    command -v ffmpeg >/dev/null || { echo "bench: ffmpeg is missing" >&2; exit 2; }
    mkfifo "$work/busy.fifo" 2>/dev/null || true
    ffmpeg -v error -re -f lavfi -i "mandelbrot=size=1280x720:rate=20" -t "$((duration + 5))" -pix_fmt yuv420p \
        -f yuv4mpegpipe -y "$work/busy.fifo" &
    feeder=$!
    sender_args=(--source y4m:- --bitrate 2500)
    sender_stdin="$work/busy.fifo"
    scenario bottleneck1m --seed 3 --rate 1000 --queue 31250 --delay 20 --back-delay 20
    sender_args=(--source testsrc)
    sender_stdin="" 
    kill "$feeder" 2>/dev/null || true; wait "$feeder" 2>/dev/null || true
    rm -f "$work/busy.fifo" ;;
esac
