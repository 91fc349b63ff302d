#!/usr/bin/env bash
# Runs the micro benchmark 5 times (the machine is shared and noisy) and prints, per operation
# and size, the median of the runs' medians as one JSON line, ratios and "met" recomputed from
# those medians. Usage: bench/run-micro.sh [runs]   (raw lines are kept in bench/.build/micro-runs.jsonl)
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-5}
swift build -c release --package-path . --product yuv-bench >&2
bin=$(swift build -c release --package-path . --show-bin-path)/yuv-bench
raw=.build/micro-runs.jsonl
: > "$raw"
for i in $(seq 1 "$runs"); do
    echo "run $i/$runs" >&2
    "$bin" >> "$raw"
done

# field NAME LINE: the value of a JSON field (string or number) in one of our flat lines.
field() {
    local v
    v=$(sed -nE "s/.*\"$1\":\"([^\"]*)\".*/\1/p" <<< "$2")
    [ -n "$v" ] || v=$(sed -nE "s/.*\"$1\":([^,}]*).*/\1/p" <<< "$2")
    echo "$v"
}
# median of numbers on stdin.
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

keys=$(while read -r line; do echo "$(field op "$line")|$(field size "$line")"; done < "$raw" | awk '!seen[$0]++')
for key in $keys; do
    op=${key%%|*}; size=${key##*|}
    lines=$(grep -F "\"op\":\"$op\"" "$raw" | grep -F "\"size\":\"$size\"")
    first=$(head -n1 <<< "$lines")
    ours=$(while read -r l; do field ours_ns "$l"; done <<< "$lines" | median)
    lib=$(while read -r l; do field libyuv_ns "$l"; done <<< "$lines" | median)
    mem=$(while read -r l; do field memcpy_ns "$l"; done <<< "$lines" | median)
    target=$(field target "$first")
    detail=$(field detail "$first")
    awk -v op="$op" -v size="$size" -v d="$detail" -v o="$ours" -v l="$lib" -v m="$mem" -v t="$target" -v n="$runs" 'BEGIN {
        r = o / l
        printf "{\"op\":\"%s\",\"size\":\"%s\",\"detail\":\"%s\",\"runs\":%d,\"ours_ns\":%d,\"libyuv_ns\":%d,\"memcpy_ns\":%d,\"ratio_vs_libyuv\":%.3f,\"ratio_vs_memcpy\":%.3f,\"target\":%.1f,\"met\":%s}\n", op, size, d, n, o, l, m, r, o / m, t, (r <= t ? "true" : "false")
    }'
done
