#!/usr/bin/env bash
# What a TURN relay costs a WHIP share: peak RSS, CPU per media second and the time to a
# connected DTLS-SRTP session, direct and through coturn over UDP, TCP and TLS (relay-only),
# interleaved runs on loopback. coturn (with a CA and certificate made here) and aiortc's WHIP
# server (Tests/Peers/whip_server.py) are started and stopped by the script.
#
#   bench/run-turn.sh [RTCSHARE_BINARY] [RUNS] [SECONDS]
#
# Default binary: the release build (scripts/build-release). Needs coturn, openssl, python3
# with aiortc (scripts/setup installs them), /usr/bin/time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$("$here/scripts/build-release")}"
runs="${2:-3}"
seconds="${3:-20}"
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"

# A CA and a certificate for 127.0.0.1 (the turns: URI's host).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
  -subj "/CN=rtcshare bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout turn.key -out turn.csr -subj "/CN=turn" 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" > san.ext
openssl x509 -req -in turn.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out turn.pem -days 2 -extfile san.ext 2>/dev/null
echo "bench-secret" > credential

turnserver -n --no-cli --no-dtls -L 127.0.0.1 --relay-ip 127.0.0.1 -p 3478 --tls-listening-port 5349 \
  --cert "$dir/turn.pem" --pkey "$dir/turn.key" --allow-loopback-peers --lt-cred-mech --user bench:bench-secret \
  --realm rtcshare.bench --log-file stdout --simple-log --pidfile "$dir/turn.pid" --userdb "$dir/turndb" \
  >coturn.log 2>&1 &
pids+=($!)
python3 "$here/Tests/Peers/whip_server.py" --host 127.0.0.1 --port-file port --summary summary.json >whip.log 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s port ] && break; sleep 0.2; done
port="$(cat port)"
sleep 1

printf "%-7s %4s %12s %18s %14s\n" path run "peak MiB" "CPU s / media s" "connected ms"
for run in $(seq 1 "$runs"); do
  for mode in direct udp tcp tls; do
    case $mode in
      direct) extra=() ;;
      udp) extra=(--ice-server "turn:127.0.0.1:3478?transport=udp") ;;
      tcp) extra=(--ice-server "turn:127.0.0.1:3478?transport=tcp") ;;
      tls) extra=(--ice-server "turns:127.0.0.1:5349" --ice-ca ca.pem) ;;
    esac
    if [ "$mode" != direct ]; then
      extra+=(--ice-username bench --ice-credential-file credential --ice-transport-policy relay)
    fi
    rm -f stats.json
    /usr/bin/time -f "%U %S" -o cpu.txt "$bin" --whip "http://127.0.0.1:$port/whip/b-$mode-$run" \
      --whip-bind 127.0.0.1:0 --size 1280x720 --fps 20 --audio testtone --duration "$seconds" \
      --stats-json stats.json "${extra[@]}" >share.log 2>&1
    peak="$(tail -1 stats.json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["peak_rss_bytes"] / 1048576, 2))')"
    cpu="$(awk -v s="$seconds" '{ printf "%.3f", ($1 + $2) / s }' cpu.txt)"
    connected="$(grep -o 'DTLS-SRTP [A-Z0-9_]* at [0-9]* ms' share.log | grep -o '[0-9]* ms' | tr -d ' ms')"
    printf "%-7s %4s %12s %18s %14s\n" "$mode" "$run" "$peak" "$cpu" "${connected:--}"
  done
done
