// swift-tools-version: 6.1
// Micro benchmarks, each timed side by side with a reference in one run: CCore's pixel
// transforms against libyuv and memcpy (yuv-bench), and RTPSender's packetize + SRTP protect
// against raw libsrtp2 protect of the same packets (packetize-bench). `bench/run` runs them with
// the end-to-end suite. A package of its own so libyuv never becomes a dependency of the product.
//   swift run -c release --package-path bench yuv-bench
import PackageDescription

let package = Package(
    name: "rtcshare-bench",
    dependencies: [
        .package(name: "rtcshare", path: ".."),
    ],
    targets: [
        // libyuv-dev ships no pkg-config file: the module map links it by name.
        .systemLibrary(name: "CLibYUV", path: "Sources/CLibYUV",
                       providers: [.apt(["libyuv-dev"])]),
        .executableTarget(
            name: "yuv-bench",
            dependencies: [
                .product(name: "CCore", package: "rtcshare"),
                "CLibYUV",
            ],
            path: "Sources/yuv-bench",
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("yuv"), .linkedLibrary("m")]
        ),
        .executableTarget(
            name: "packetize-bench",
            dependencies: [.product(name: "RTCShareRTP", package: "rtcshare")],
            path: "Sources/packetize-bench"
        ),
        // The video encoder alone at a share's size and content: its resident growth (issue 10's
        // "everything but the encoder" is a share's peak minus it).
        .executableTarget(
            name: "encoder-alone",
            dependencies: [.product(name: "RTCShare", package: "rtcshare")],
            path: "Sources/encoder-alone"
        ),
    ]
)
