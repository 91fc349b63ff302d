// swift-tools-version: 6.1
// Micro benchmarks of CCore's pixel transforms, each timed side by side with libyuv (the
// reference) and with memcpy of the same traffic (the physical floor) in one run.
// A package of its own so libyuv never becomes a dependency of the product.
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
    ]
)
