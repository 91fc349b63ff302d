// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "rtcshare",
    products: [
        .library(name: "RTCShare", targets: ["RTCShare"]),
        .library(name: "RTCShareCore", targets: ["RTCShareCore"]),
        .library(name: "CCore", targets: ["CCore"]),
        .library(name: "RTCShareICE", targets: ["RTCShareICE"]),
        // The C ABI (Sources/CRTCShareABI/include/rtcshare.h), shared and static.
        .library(name: "rtcshare-c", type: .dynamic, targets: ["RTCShareCABI"]),
        .library(name: "rtcshare-c-static", type: .static, targets: ["RTCShareCABI"]),
        .library(name: "RTCShareWHIP", targets: ["RTCShareWHIP"]),
        // The sans-IO RTP/SRTP send core on its own: bench/ times RTPSender against raw libsrtp2.
        .library(name: "RTCShareRTP", targets: ["RTCShareRTP"]),
        // The checking receiver, for the CLI's `receive` and fuzz/ (its SDP reading).
        .library(name: "RTCShareReceive", targets: ["RTCShareReceive"]),
        .executable(name: "rtcshare", targets: ["rtcshare"]),
        .executable(name: "rtcshare-producer", targets: ["rtcshare-producer"]),
        .executable(name: "rtcshare-relay", targets: ["rtcshare-relay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The C core: capped arena, pools, frames, rings, pixel and sample transforms. libc only.
        .target(
            name: "CCore",
            path: "CCore",
            exclude: ["tests"],
            sources: ["src"],
            publicHeadersPath: "include",
            cSettings: [.define("_GNU_SOURCE")]
        ),

        // System libraries, found through pkg-config; the providers name the Debian packages.
        .systemLibrary(name: "CVPX", path: "Sources/CVPX", pkgConfig: "vpx",
                       providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus",
                       providers: [.apt(["libopus-dev"])]),
        // Headers only: CShims loads libopenh264 with dlopen on first use (no pkg-config, so
        // nothing links it; a VP8 share never maps it).
        .systemLibrary(name: "COpenH264", path: "Sources/COpenH264", providers: [.apt(["libopenh264-dev"])]),
        .systemLibrary(name: "CSRTP", path: "Sources/CSRTP", pkgConfig: "libsrtp2",
                       providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CXCB", path: "Sources/CXCB", pkgConfig: "xcb-shm",
                       providers: [.apt(["libxcb1-dev", "libxcb-shm0-dev", "libxcb-damage0-dev", "libxcb-xfixes0-dev"])]),
        .systemLibrary(name: "CSpeexDSP", path: "Sources/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "COgg", path: "Sources/COgg", pkgConfig: "ogg",
                       providers: [.apt(["libogg-dev"])]),
        // libcurl's headers only: the library is loaded on first use (CCurlShims), not linked.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // Swift face of CCore: owned pools and slots as values, pixels borrowed inside closures;
        // and the words every layer above shares (media time, the video codec, H.264 levels).
        .target(name: "RTCShareCore", dependencies: ["CCore"]),

        // Non-variadic wrappers over libvpx and libopus calls Swift cannot make (macros, varargs),
        // and openh264's C++-style vtables behind plain functions.
        .target(name: "CShims", dependencies: ["CVPX", "COpus", "COpenH264", "CCore"]),

        // Media that needs no OS: test source, Y4M, frame marker, VP8 and H.264 codecs, IVF writer.
        .target(name: "RTCShareMedia", dependencies: ["RTCShareCore", "CShims", "CVPX", "COpus", "CSpeexDSP", "COgg"]),

        // The edge: the monotonic clock, the event loop, threads, files, UDP and Unix sockets. Knows
        // no media: the relay links it without the codecs.
        .target(name: "RTCShareIO", dependencies: ["RTCShareCore", "CIPCShims", "CEventShims"]),

        // epoll, eventfd and timerfd for the event loop (Swift's Glibc module has none of them).
        .target(name: "CEventShims"),

        // Socket and memfd calls Swift cannot import (GNU extensions, CMSG macros), for IPC.
        .target(name: "CIPCShims", cSettings: [.define("_GNU_SOURCE")]),

        // The reference IPC producer: streams the test pattern and a tone into `--source ipc:PATH`.
        .executableTarget(
            name: "rtcshare-producer",
            dependencies: ["RTCShareCore", "RTCShareMedia", "RTCShareIO",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // A network path's impairments (loss, bursts, delay, jitter, reordering, duplication, a
        // bandwidth cap and its queue), sans-IO: datagrams and times in, arrivals out.
        .target(name: "RTCShareImpairment", dependencies: ["RTCShareCore"]),

        // The impairment relay: `ImpairedPath` both ways between a sender and a receiver on loopback.
        .executableTarget(
            name: "rtcshare-relay",
            dependencies: ["RTCShareCore", "RTCShareImpairment", "RTCShareIO",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // RTP, RTCP and SRTP as bytes: packets, payload formats, feedback, protection, history.
        // No sockets and no threads here; the transport in RTCShare drives it.
        .target(name: "RTCShareRTP", dependencies: ["RTCShareCore", "CSRTP"]),

        // STUN messages and a sans-IO ICE agent (RFC 5389/8489, 8445, 7675). Bytes and times in,
        // datagrams to send and events out; no sockets, clock or random source inside.
        .target(name: "RTCShareICE", dependencies: ["RTCShareCore", "CDTLSShims"]),

        // Non-variadic wrappers over libcurl (curl_easy_setopt/getinfo) and the bounded response capture.
        .target(name: "CCurlShims", dependencies: ["CCurl"]),

        // WHIP (RFC 9725): the WebRTC offer, the strict reading of the answer, the HTTP client on libcurl.
        .target(name: "RTCShareWHIP", dependencies: ["RTCShareCore", "RTCShareRTP", "RTCShareDTLS", "CCurl", "CCurlShims"]),
        // Every libssl/libcrypto call of the product: OpenSSL macros, variadic calls and the C
        // callbacks DTLS needs (datagram BIO, fingerprint check, timer), behind rtcs_ssl_*, and SHA-1
        // for STUN. OpenSSL is loaded on first use (dlopen), not linked: only WebRTC sessions need it.
        .target(name: "CDTLSShims"),

        // DTLS-SRTP, sans-IO: certificate and fingerprint, the handshake over datagrams the
        // caller carries, SRTP master keys for RTCShareRTP.
        .target(name: "RTCShareDTLS", dependencies: ["RTCShareCore", "CDTLSShims", "RTCShareRTP"]),

        // The transport core, sans-IO, one type for --peer and WebRTC: the RTP send (or receive)
        // core and its rate control, and for WebRTC the connection (ICE and DTLS) on one socket.
        .target(name: "RTCShareTransport", dependencies: ["RTCShareCore", "RTCShareRTP", "RTCShareICE", "RTCShareDTLS"]),

        // A share: sources, the pipeline run loop, memory planning, lifecycle events. Re-exports
        // the layers its API names (API/Exports.swift): `import RTCShare` is all an embedder needs.
        .target(name: "RTCShare", dependencies: ["RTCShareCore", "RTCShareMedia", "RTCShareIO", "RTCShareRTP", "RTCShareICE",
                                                 "RTCShareDTLS", "RTCShareTransport", "RTCShareWHIP", "CXCB", "CWayland", "CPortal"]),

        // The checking receiver (`rtcshare receive`): rtcshare's RTP/SRTP in (the wire RTCShare
        // defines), decoded, checked against the frame markers, written to Y4M/WAV, reported.
        // Linked by the CLI and the tests, never by a share or the C ABI.
        .target(name: "RTCShareReceive",
                dependencies: ["RTCShare", "RTCShareCore", "RTCShareMedia", "RTCShareIO", "RTCShareRTP"]),

        // The C ABI: rtcshare.h and its defaults in C, the functions in Swift over ShareAgent.
        .target(name: "CRTCShareABI"),
        .target(name: "RTCShareCABI",
                dependencies: ["CRTCShareABI", "RTCShare"]),

        // The command-line tool, a thin layer over the library.
        .executableTarget(
            name: "rtcshare",
            // The C libraries only for their version strings (--build-info).
            dependencies: ["RTCShare", "RTCShareReceive", "CVPX", "COpus", "CSRTP"]
        ),

        // What the test targets share and the product never links: the seeded generator, the
        // fake clock, and the helpers that run and wait on processes. (Simulated paths are the
        // relay's own model, RTCShareImpairment's `ImpairedPath`.)
        .target(name: "TestSupport", dependencies: ["RTCShareCore"], path: "Tests/TestSupport"),

        .testTarget(name: "RTCShareCoreTests", dependencies: ["RTCShareCore"]),
        .testTarget(name: "RTCShareImpairmentTests", dependencies: ["RTCShareImpairment", "RTCShareCore", "TestSupport"]),
        .testTarget(name: "RTCShareTests", dependencies: ["RTCShare", "RTCShareReceive", "RTCShareCore", "RTCShareMedia", "RTCShareIO", "RTCShareRTP",
                                                  "RTCShareICE", "RTCShareWHIP", "RTCShareDTLS", "TestSupport"]),
        .testTarget(name: "InteropTests", dependencies: ["RTCShare", "RTCShareCore", "RTCShareMedia", "RTCShareRTP", "rtcshare", "rtcshare-producer", "rtcshare-relay", "RTCShareIO", "CXCB", "TestSupport",
                                                          "wayland-test-client"]),
        .testTarget(name: "RTCShareRTPTests", dependencies: ["RTCShareRTP", "RTCShareCore", "RTCShareMedia", "RTCShareImpairment",
                                                    "COpenSSL", "TestSupport"]),
        .testTarget(name: "RTCShareICETests", dependencies: ["RTCShareICE", "RTCShareCore", "RTCShareImpairment", "TestSupport"],
                    resources: [.copy("Vectors")]),
        .testTarget(name: "RTCShareWHIPTests", dependencies: ["RTCShareWHIP", "RTCShareRTP", "RTCShareDTLS", "TestSupport"],
                    exclude: ["Vectors"]),
        .testTarget(name: "RTCShareTransportTests",
                    dependencies: ["RTCShareTransport", "RTCShareRTP", "RTCShareICE", "RTCShareDTLS", "RTCShareCore",
                                   "RTCShareImpairment", "TestSupport"]),
        .testTarget(name: "RTCShareDTLSTests", dependencies: ["RTCShareDTLS", "RTCShareRTP", "TestSupport"]),
        .testTarget(name: "RTCShareMediaTests",
                    dependencies: ["RTCShareMedia", "RTCShareCore", "CShims", "CVPX", "COpus", "CSpeexDSP", "TestSupport"]),

        // wlroots screencopy over libwayland-client for the wayland source: the protocol code
        // wayland-scanner made from protocol/ (scripts/generate-wayland-protocol) and the
        // listeners, behind plain functions. Linked like libxcb: libwayland-client0 is small and
        // on every system that has a compositor.
        .target(name: "CWayland", exclude: ["protocol"], cSettings: [.define("_GNU_SOURCE")],
                linkerSettings: [.linkedLibrary("wayland-client")]),
        // The window the wayland source's tests capture (a known picture, the frame marker).
        .executableTarget(name: "wayland-test-client", path: "Tests/WaylandTestClient",
                          exclude: ["wlr-virtual-pointer-unstable-v1.xml"],
                          cSettings: [.define("_GNU_SOURCE")], linkerSettings: [.linkedLibrary("wayland-client")]),

        // The portal source: the ScreenCast portal over libdbus-1 (the reference client, no main
        // loop forced on its user, on every desktop system) and its PipeWire stream over
        // libpipewire-0.3 (the only client library of PipeWire's protocol), behind plain functions.
        // Neither is linked: CPortal loads both on first use (dlopen), so other shares never map
        // them (linked, they and their chain cost every share 1.3 MiB resident). SPA's headers
        // are header-only; the few declarations of the two libraries CPortal uses are its own,
        // checked against their headers by PortalCaptureTests.
        .systemLibrary(name: "CSPA", path: "Sources/CSPA", pkgConfig: "libspa-0.2", providers: [.apt(["libspa-0.2-dev"])]),
        .target(name: "CPortal", dependencies: ["CSPA"], cSettings: [.define("_GNU_SOURCE")],
                linkerSettings: [.linkedLibrary("dl")]),
    ]
)
