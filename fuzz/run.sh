#!/usr/bin/env bash
# Builds the libFuzzer harnesses (debug, -sanitize=fuzzer,address on every target, the root
# package's parsers included) and runs each for a fixed time. One line per harness:
#   fuzz-rtcp: 123456 runs (6172/s), 0 crashes
# Exits 1 if any harness found a crash (or timeout, OOM, leak, oracle failure), 2 if the build
# or a harness failed to run at all.
#
#   fuzz/run.sh [SECONDS] [HARNESS...]   SECONDS per harness (default 20); default all harnesses
#   fuzz/run.sh --seeds                  rewrite the generated seeds, corpus/<harness>/gen-*
#   FUZZ_PARALLEL=2 fuzz/run.sh 60       run two harnesses at a time (one per core)
#
# Writes only under fuzz/: fuzz/Package.resolved (git-ignored) and fuzz/.build — the build, the
# growing working corpus in .build/corpus/<harness> (libFuzzer adds new inputs to the first
# directory it is given; the checked-in seeds in corpus/<harness> are only read), crash inputs
# in .build/artifacts/<harness>, logs in .build/logs. (SwiftPM also uses its user cache,
# ~/.cache/org.swift.swiftpm, as for any build.) Running it again is safe: it continues from the
# working corpus.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scratch="$here/.build"
all=(fuzz-rtp fuzz-vp8 fuzz-h264 fuzz-rtcp fuzz-sdp fuzz-ipc fuzz-y4m fuzz-rx fuzz-receiver fuzz-addr fuzz-whip-answer fuzz-whip-restart fuzz-stun fuzz-candidate fuzz-turn fuzz-capture)
flags=(-c debug -j 2 -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address)

build() {
    mkdir -p "$scratch/logs"
    local start=$SECONDS
    # ld.gold warns "Cannot export local symbol '__asan_…'" for every binary: harmless, kept in the log.
    if ! swift build --package-path "$here" --scratch-path "$scratch" "${flags[@]}" >"$scratch/logs/build.log" 2>&1; then
        grep -v "Cannot export local symbol" "$scratch/logs/build.log" | tail -40 >&2
        echo "fuzz: build failed (full log: $scratch/logs/build.log)" >&2
        exit 2
    fi
    echo "fuzz: built in $((SECONDS - start)) s"
    bin="$(swift build --package-path "$here" --scratch-path "$scratch" "${flags[@]}" --show-bin-path)"
}

if [ "${1:-}" = "--seeds" ]; then
    build
    "$bin/fuzz-seeds" "$here/corpus"
    exit 0
fi

seconds="${1:-20}"
[ $# -gt 0 ] && shift
case "$seconds" in ''|*[!0-9]*) echo "usage: fuzz/run.sh [SECONDS] [HARNESS...] | --seeds" >&2; exit 2 ;; esac
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
parallel="${FUZZ_PARALLEL:-1}"

build

# A smaller quarantine than ASan's 256 MB default keeps the RSS well under -rss_limit_mb while
# still catching use-after-free of recent allocations.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1:handle_abort=1}"
# The Swift runtime's own crash backtracer would take the fatal signal first, and its memory
# reader then trips ASan ("unknown-crash … memserver_read"), burying the real report; libFuzzer
# and ASan print the symbolized stack themselves.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

# The first 64 bytes of a file as hex ("…" when there are more).
hex() {
    printf '%s' "$(head -c 64 "$1" | od -An -tx1 | tr -d ' \n')"
    [ "$(stat -c %s "$1")" -gt 64 ] && printf '…'
    return 0
}

# Runs one harness; writes its summary line to .build/logs/<harness>.summary.
fuzz_one() {
    local t="$1"
    local work="$scratch/corpus/$t" art="$scratch/artifacts/$t" log="$scratch/logs/$t.log"
    local sum="$scratch/logs/$t.summary"
    mkdir -p "$work" "$art"
    local before
    before="$(ls -1 "$art" | sort)"
    local dict=()
    [ -f "$here/dict/$t.dict" ] && dict=(-dict="$here/dict/$t.dict")
    local rc=0
    "$bin/$t" "$work" "$here/corpus/$t" -max_total_time="$seconds" -rss_limit_mb=512 -timeout=5 \
        -print_final_stats=1 -artifact_prefix="$art/" "${dict[@]}" >"$log" 2>&1 || rc=$?
    local runs rate new
    runs="$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)"
    rate="$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)"
    new="$(comm -13 <(echo "$before") <(ls -1 "$art" | sort) | grep -v '^$' || true)"
    local crashes
    crashes="$(printf '%s' "$new" | grep -c . || true)"
    if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi  # died without an artifact
    {
        echo "$t: ${runs:-0} runs (${rate:-0}/s), $crashes crashes"
        if [ "$crashes" -gt 0 ]; then
            for f in $new; do
                echo "  $t: artifact $art/$f ($(stat -c %s "$art/$f") bytes): $(hex "$art/$f")"
                case "$f" in
                    crash-*)
                        # Up to 10 s of libFuzzer's crash minimization (same crash, fewer bytes).
                        "$bin/$t" "$art/$f" -minimize_crash=1 -max_total_time=10 -runs=100000 \
                            -exact_artifact_path="$art/minimized-$f" >"$scratch/logs/$t.minimize.log" 2>&1 || true
                        [ -s "$art/minimized-$f" ] && echo "  $t: minimized $art/minimized-$f ($(stat -c %s "$art/minimized-$f") bytes): $(hex "$art/minimized-$f")"
                        ;;
                esac
                echo "  $t: reproduce: $bin/$t $art/$f"
            done
            [ -z "$new" ] && echo "  $t: exit status $rc, no artifact; see $log"
            grep -m1 -E "ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|FUZZ ORACLE FAILED|Fatal error|SUMMARY" "$log" \
                | sed "s/^/  $t: /" || true
            echo "  $t: log $log"
        fi
    } >"$sum"
    return 0
}

for t in "${targets[@]}"; do
    if [ ! -x "$bin/$t" ] || [ ! -d "$here/corpus/$t" ]; then
        echo "fuzz: no harness '$t' (have: ${all[*]})" >&2
        exit 2
    fi
done

start=$SECONDS
running=0
for t in "${targets[@]}"; do
    rm -f "$scratch/logs/$t.summary"
    fuzz_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

status=0
for t in "${targets[@]}"; do
    cat "$scratch/logs/$t.summary"
    grep -q ", 0 crashes$" "$scratch/logs/$t.summary" || status=1
done
echo "fuzz: ${#targets[@]} harnesses, ${seconds} s each, $((SECONDS - start)) s of fuzzing (artifacts in $scratch/artifacts)"
exit $status
