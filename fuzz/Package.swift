// swift-tools-version: 6.1
// Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of the parsers that read untrusted
// input: RTP/RTCP/VP8/H.264 from the network, SDP, the IPC producer protocol, Y4M headers, peer
// addresses, STUN messages and ICE candidates, and what a compositor hands the screen capture. A package of its own, like bench/, so the product never links libFuzzer.
//
// The sanitizer flags are NOT set here: they must reach the root package's targets too (the
// parsers are what needs coverage instrumentation), and settings in this manifest only apply
// to this package's targets. run.sh passes them on the command line:
//   swift build --package-path fuzz --scratch-path fuzz/.build -j 2 \
//     -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address
// Then: fuzz/run.sh [seconds-per-target]. See fuzz/README.md.
import PackageDescription

// The root package exports no product for RTCShareRTP, RTCShareMedia or RTCShareIO; its
// `RTCShare` library product builds them all, and their modules are importable from here.
let rtcshare: Target.Dependency = .product(name: "RTCShare", package: "rtcshare")
let whip: Target.Dependency = .product(name: "RTCShareWHIP", package: "rtcshare")
let ice: Target.Dependency = .product(name: "RTCShareICE", package: "rtcshare")
let receive: Target.Dependency = .product(name: "RTCShareReceive", package: "rtcshare")

/// One libFuzzer executable per input format: each has its own coverage map, corpus and seeds.
func harness(_ name: String, _ more: [Target.Dependency] = []) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport", rtcshare] + more, path: "Sources/\(name)")
}

let package = Package(
    name: "rtcshare-fuzz",
    dependencies: [
        .package(name: "rtcshare", path: ".."),
    ],
    targets: [
        // Declares LLVMFuzzerRunDriver (no installed header has it); nothing to compile.
        .systemLibrary(name: "CFuzzerDriver", path: "Sources/CFuzzerDriver"),
        // Input cursor, the sink that keeps results alive, the driver call.
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], path: "Sources/FuzzSupport"),

        harness("fuzz-rtp"),   // RTPHeader + header extensions + VP8 descriptor + Opus TOC
        harness("fuzz-vp8"),   // VP8Depacketizer over a sequence of packets
        harness("fuzz-h264"),  // H264Depacketizer over a sequence of packets + the packetizer's Annex B scan
        harness("fuzz-rtcp"),  // RTCPParser (compound)
        harness("fuzz-sdp", [receive]),   // SessionDescription + accessors + SRTP key base64 + ReceiveConfiguration
        harness("fuzz-ipc"),   // IPCMessage + IPCProducerStateMachine
        harness("fuzz-y4m"),   // Y4MHeader
        harness("fuzz-rx"),    // JitterBuffer, NackGenerator, ReceiveStatistics
        harness("fuzz-receiver"),  // RTPReceiver: whole datagrams, time, polls (the receive core)
        harness("fuzz-addr"),  // SocketAddress(parsing:) (numeric hosts only: no DNS)
        harness("fuzz-whip-answer", [whip]),  // WebRTCAnswer.parse (a WHIP server's SDP answer)
        harness("fuzz-whip-restart", [whip]),  // WHIPICERestart.parse (a WHIP server's ICE restart answer)
        harness("fuzz-stun", [ice]),       // STUNMessage + integrity/fingerprint checks + looksLikeSTUN
        harness("fuzz-candidate", [ice]),  // ICECandidate (a=candidate) + ICEAddress
        harness("fuzz-turn", [ice]),  // TURNClient's responses and relayed data, TURN stream framing, ICE server URIs
        harness("fuzz-capture"),  // a compositor's buffer geometry, transform and damage: banded conversion (LastPicture)

        // Writes the seed corpora (corpus/<harness>/) from the code's own writers.
        .executableTarget(name: "fuzz-seeds", dependencies: ["FuzzSupport", rtcshare, ice],
                          path: "Sources/fuzz-seeds"),
    ]
)
