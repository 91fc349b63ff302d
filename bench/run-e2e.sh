#!/usr/bin/env bash
# The whole job side by side with a reference, in one run: send the same 1280x720 screen clip at
# 20 fps with a 440 Hz tone as VP8 (1000 kbit/s, realtime) + Opus over SRTP to a receiver on
# loopback, once with rtcshare and once with ffmpeg (the reference: libvpx and libopus through
# its SRTP RTP muxer), several times in alternation, and compare each sender's peak RSS and CPU
# seconds per second of media. The receiver is `rtcshare receive` in both cases; its frame count
# shows each sender did the job. Prints one JSON line per sender and one with the ratios.
#
#   bench/run-e2e.sh [TRIALS=3] [SECONDS=10]
#
# Both read the same .y4m clip (made first from rtcshare's test source through the built-in
# receiver, so it is the decoded screen content at 20 fps), paced at its frame rate. Encoder
# settings are matched where ffmpeg 5.1 exposes them (realtime deadline, cpu-used -6, one
# thread, no lag, no alt-ref, error resilient, static threshold 100, CBR); ffmpeg has no VP8
# screen-content mode, which rtcshare uses. Memory is the peak RSS of the sending process
# (/usr/bin/time); rtcshare is the release build with the Swift runtime linked in.
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-3}"
seconds="${2:-10}"
work="${TMPDIR:-/tmp}/rtcshare-e2e"
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

swift build -c release --static-swift-stdlib --product rtcshare -j 2 >&2
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)/rtcshare"
key=$(head -c 30 /dev/urandom | base64)
port=$(( 40000 + (RANDOM % 10000) * 2 ))

# 1. The clip: the test source, decoded by the built-in receiver at a high bitrate.
clip="$work/clip-${seconds}s-20fps.y4m"
if [ ! -s "$clip" ]; then
    echo "bench: making $clip" >&2
    # The sender's SDP carries a=framerate, so the receiver's .y4m header says 20 fps.
    rm -f "$work/clip.sdp"
    "$bin" --source testsrc --size 1280x720 --fps 20 --bitrate 8000 --audio none \
        --duration "$seconds" --peer "127.0.0.1:$port" --sdp "$work/clip.sdp" --start-delay 1 --quiet &
    tx=$!
    for _ in $(seq 50); do [ -s "$work/clip.sdp" ] && break; sleep 0.1; done
    "$bin" receive --sdp "$work/clip.sdp" --y4m "$clip.part" --quiet --idle-timeout 2 >&2
    wait "$tx"
    head -c 40 "$clip.part" | grep -q " F20:1 " || { echo "bench: the clip is not 20 fps" >&2; exit 1; }
    mv "$clip.part" "$clip"
fi

# run_once NAME COMMAND...: runs a receiver, then the sender under /usr/bin/time; prints the
# sender's "peak_kb cpu_s" and what the receiver got: "frames audio_packets".
run_once() {
    local name="$1"; shift
    "$bin" receive --listen "127.0.0.1:$port" --srtp-key "$key" --stats-json "$work/$name.rx.json" \
        --quiet --idle-timeout 2 >/dev/null 2>&1 &
    local rx=$!
    sleep 0.3
    /usr/bin/time -f "%M %U %S" -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1 || {
        echo "bench: $name failed:" >&2; tail -5 "$work/$name.log" >&2; kill "$rx" 2>/dev/null; exit 1; }
    wait "$rx" || true
    local frames audio
    frames=$(sed -nE 's/.*"frames":([0-9]+).*/\1/p' "$work/$name.rx.json")
    audio=$(sed -nE 's/.*"audio_packets":([0-9]+).*/\1/p' "$work/$name.rx.json")
    read -r kb user sys < "$work/$name.time"
    echo "$kb $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') ${frames:-0} ${audio:-0}"
}

ours=(); ref=()
for t in $(seq 1 "$trials"); do
    echo "bench: trial $t/$trials" >&2
    ours+=("$(run_once rtcshare "$bin" --source "y4m:$clip" --size 1280x720 --fps 20 --bitrate 1000 \
        --audio testtone --peer "127.0.0.1:$port" --srtp-key "$key" --keyframe-interval 3 --quiet)")
    ref+=("$(run_once ffmpeg ffmpeg -hide_banner -loglevel error -nostdin -re -i "$clip" \
        -re -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
        -map 0:v -c:v libvpx -deadline realtime -cpu-used -6 -threads 1 -lag-in-frames 0 -auto-alt-ref 0 \
        -error-resilient default -static-thresh 100 -b:v 1000k -minrate 1000k -maxrate 1000k \
        -g 60 -payload_type 96 -ssrc 1111 \
        -f rtp -srtp_out_suite AES_CM_128_HMAC_SHA1_80 -srtp_out_params "$key" "srtp://127.0.0.1:$port?pkt_size=1200" \
        -map 1:a -c:a libopus -b:a 64k -application voip -frame_duration 20 -payload_type 111 -ssrc 2222 \
        -f rtp -srtp_out_suite AES_CM_128_HMAC_SHA1_80 -srtp_out_params "$key" "srtp://127.0.0.1:$((port + 2))?pkt_size=1200")")
done

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
field() { local i="$1"; shift; for line in "$@"; do echo "$line" | awk -v i="$i" '{print $i}'; done | median; }
o_kb=$(field 1 "${ours[@]}"); o_cpu=$(field 2 "${ours[@]}"); o_fr=$(field 3 "${ours[@]}"); o_au=$(field 4 "${ours[@]}")
r_kb=$(field 1 "${ref[@]}"); r_cpu=$(field 2 "${ref[@]}"); r_fr=$(field 3 "${ref[@]}"); r_au=$(field 4 "${ref[@]}")
for who in rtcshare ffmpeg; do
    if [ "$who" = rtcshare ]; then kb=$o_kb; cpu=$o_cpu; fr=$o_fr; au=$o_au; else kb=$r_kb; cpu=$r_cpu; fr=$r_fr; au=$r_au; fi
    awk -v w="$who" -v kb="$kb" -v cpu="$cpu" -v fr="$fr" -v au="$au" -v s="$seconds" -v n="$trials" 'BEGIN {
        printf "{\"sender\":\"%s\",\"job\":\"1280x720@20 VP8 1000k + Opus, SRTP, %d s\",\"trials\":%d,", w, s, n
        printf "\"peak_rss_mib\":%.1f,\"cpu_s_per_media_s\":%.3f,\"frames_received\":%d,\"audio_packets_received\":%d}\n", kb / 1024, cpu / s, fr, au }'
done
awk -v okb="$o_kb" -v rkb="$r_kb" -v oc="$o_cpu" -v rc="$r_cpu" 'BEGIN {
    printf "{\"ratio\":\"rtcshare/ffmpeg\",\"peak_rss\":%.3f,\"cpu\":%.3f}\n", okb / rkb, (rc > 0 ? oc / rc : 0) }'
