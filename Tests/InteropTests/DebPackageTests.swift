import Foundation
import RTCShare
import TestSupport
import Testing

/// The Debian package `scripts/build-deb` makes, named by RTCSHARE_DEB (`.ci/run` builds it;
/// without it the tests are skipped and say so): its contents, then installed with dpkg into a
/// scratch root, the installed binary runs a share and the installed library serves a C program
/// built with nothing but `pkg-config --cflags --libs rtcshare`. An arm64 package (`build-deb
/// --arch arm64`) is checked the same way under qemu as a Pi 4, against the sysroot that
/// RTCSHARE_AARCH64_SYSROOT names (`scripts/build-aarch64`'s), its C program cross-compiled.
@Suite(.serialized) struct DebPackageTests {
    static let deb = ProcessInfo.processInfo.environment["RTCSHARE_DEB"]
    static let sysroot = ProcessInfo.processInfo.environment["RTCSHARE_AARCH64_SYSROOT"]

    static let architecture: String = {
        guard let deb, let dpkgDeb = Tools.which("dpkg-deb"),
              let run = try? Tools.run(dpkgDeb, ["--field", deb, "Architecture"]) else { return "" }
        return String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }()
    static var triplet: String { architecture == "arm64" ? "aarch64-linux-gnu" : "x86_64-linux-gnu" }
    /// What runs a program of the package's architecture here.
    static var runner: [String] {
        architecture == "arm64" ? ["/usr/bin/qemu-aarch64", "-cpu", "cortex-a72", "-L", sysroot ?? ""] : []
    }
    /// The C compiler for the package's architecture.
    static var cc: String {
        architecture == "arm64" ? "clang --target=aarch64-linux-gnu --sysroot='\(sysroot ?? "")' -fuse-ld=lld" : "cc"
    }

    static let unavailable: String? = {
        guard let deb else {
            return "DebPackageTests skipped: set RTCSHARE_DEB to the package (RTCSHARE_DEB=$(scripts/build-deb))"
        }
        if !FileManager.default.fileExists(atPath: deb) { return "DebPackageTests skipped: no \(deb)" }
        for tool in ["dpkg", "dpkg-deb", "pkg-config", "cc", "ffmpeg"] where Tools.which(tool) == nil {
            return "DebPackageTests skipped: \(tool) is not on PATH"
        }
        switch architecture {
        case "amd64": return nil
        case "arm64":
            guard let sysroot, FileManager.default.fileExists(atPath: sysroot + "/usr/lib/aarch64-linux-gnu") else {
                return "DebPackageTests skipped: set RTCSHARE_AARCH64_SYSROOT to scripts/build-aarch64's sysroot"
            }
            for tool in ["qemu-aarch64", "clang"] where Tools.which(tool) == nil {
                return "DebPackageTests skipped: \(tool) is not on PATH"
            }
            return nil
        default: return "DebPackageTests skipped: \(deb) is for '\(architecture)'"
        }
    }()

    /// Runs a program of the package's architecture.
    static func runInstalled(_ program: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> Tools.Result {
        let command = runner + [program] + arguments
        return try Tools.run(command[0], Array(command.dropFirst()), timeout: timeout)
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func thePackageHoldsTheServiceTheManPageAndTheCLibrary() throws {
        let deb = try #require(Self.deb)
        let contents = try Tools.run(try #require(Tools.which("dpkg-deb")), ["--contents", deb])
        try #require(contents.status == 0, "\(contents.stderr)")
        let listing = String(decoding: contents.stdout, as: UTF8.self)
        let files = listing.split(separator: "\n").map { line in
            (mode: String(line.prefix(10)), path: String(line.split(separator: " ").last ?? ""))
        }
        for path in ["./usr/bin/rtcshare", "./usr/lib/systemd/system/rtcshare.service", "./etc/rtcshare/rtcshare.conf",
                     "./etc/rtcshare/whip-token", "./usr/share/man/man1/rtcshare.1.gz",
                     "./usr/lib/\(Self.triplet)/librtcshare.so", "./usr/include/rtcshare.h",
                     "./usr/lib/\(Self.triplet)/pkgconfig/rtcshare.pc", "./usr/share/doc/rtcshare/copyright"] {
            #expect(files.contains { $0.path == path }, "\(path) is not in the package:\n\(listing)")
        }
        #expect(files.first { $0.path == "./etc/rtcshare/whip-token" }?.mode == "-rw-------", "\(listing)")
        #expect(files.first { $0.path == "./usr/bin/rtcshare" }?.mode == "-rwxr-xr-x", "\(listing)")
        let field = { (name: String) throws -> String in
            let run = try Tools.run(try #require(Tools.which("dpkg-deb")), ["--field", deb, name])
            return String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try field("Version") == RTCShareVersion.current)
        // What it links and what it loads on first use (libcurl, OpenSSL, openh264); Debian 12's
        // packages for amd64, Debian 13's for arm64 (libvpx9, openh264's ABI 8). The portal
        // source's libdbus and libpipewire are recommended: a board without a desktop needs neither.
        let depends = try field("Depends"), recommends = try field("Recommends")
        let packages = ["libc6 (>=", "libopus0", "libsrtp2-1", "libcurl4", "libssl3"]
            + (Self.architecture == "arm64" ? ["libvpx9", "libopenh264-8"] : ["libvpx7", "libopenh264-7"])
        for package in packages {
            #expect(depends.contains(package), "Depends: \(depends)")
        }
        for package in ["libdbus-1-3", "libpipewire-0.3-0"] {
            #expect(recommends.contains(package) && !depends.contains(package), "Depends: \(depends); Recommends: \(recommends)")
        }
        #expect(try field("Installed-Size").allSatisfy(\.isNumber))
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func installedIntoAScratchRootItSharesAndItsLibraryBuildsWithPkgConfig() throws {
        let deb = try #require(Self.deb)
        let dir = try Tools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A root with an empty dpkg database; its dependencies are this machine's (not in the root).
        let root = dir.appendingPathComponent("root")
        let admin = root.appendingPathComponent("var/lib/dpkg")
        for sub in ["info", "updates", "triggers"] {
            try FileManager.default.createDirectory(at: admin.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(atPath: admin.appendingPathComponent("status").path, contents: nil)
        let install = try Tools.run(try #require(Tools.which("dpkg")),
                                    ["--root=\(root.path)", "--log=/dev/null", "--force-depends", "--force-not-root",
                                     "--force-script-chrootless", "--force-architecture", "-i", deb], timeout: 120)
        try #require(install.status == 0, "dpkg -i: \(install.stderr)")
        let status = try String(contentsOf: admin.appendingPathComponent("status"), encoding: .utf8)
        #expect(status.contains("Package: rtcshare") && status.contains("Status: install ok installed"), "\(status)")

        // The installed binary: its version, and a 2 s share an independent decoder reads.
        let rtcshare = root.appendingPathComponent("usr/bin/rtcshare").path
        let version = try Self.runInstalled(rtcshare, ["--version"])
        #expect(version.status == 0 && String(decoding: version.stdout, as: UTF8.self) == "rtcshare \(RTCShareVersion.current)\n")
        let ivf = dir.appendingPathComponent("share.ivf").path
        let share = try Self.runInstalled(rtcshare, ["--size", "320x180", "--fps", "10", "--duration", "2", "--output", ivf],
                                          timeout: 60)
        #expect(share.status == 0, "\(share.stderr)")
        let frames = try Tools.decodeLuma(ivf, width: 320, height: 180)
        let markers = Tools.markers(frames, width: 320, height: 180).compactMap { $0 }
        #expect(frames.count >= 15 && markers.count == frames.count, "\(frames.count) frames, \(markers.count) markers read")
        // The installed configuration is the default one, which configures nothing yet.
        let configured = try Self.runInstalled(rtcshare, ["--config", root.appendingPathComponent("etc/rtcshare/rtcshare.conf").path])
        #expect(configured.status == 2 && configured.stderr.contains("nothing to send to"), "\(configured.stderr)")
        let man = try Tools.run("/bin/sh", ["-c", "gzip -dc '\(root.path)/usr/share/man/man1/rtcshare.1.gz' | head -3"])
        #expect(String(decoding: man.stdout, as: UTF8.self).hasPrefix(".TH RTCSHARE 1"))

        // The C library through its .pc file, as a gateway's build finds it (the example's own
        // threads and math need -lpthread -lm, as in CABIExampleTests).
        let env = "PKG_CONFIG_SYSROOT_DIR='\(root.path)' PKG_CONFIG_LIBDIR='\(root.path)/usr/lib/\(Self.triplet)/pkgconfig'"
        let flags = try Tools.run("/bin/sh", ["-c", "\(env) pkg-config --cflags --libs rtcshare"])
        let flagText = String(decoding: flags.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(flags.status == 0 && flagText.contains("-lrtcshare") && flagText.contains(root.path), "\(flagText) \(flags.stderr)")
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples")
        let source = dir.appendingPathComponent("version.c")
        try Data("#include <stdio.h>\n#include <rtcshare.h>\nint main(void) { puts(rtcshare_version()); return 0; }\n".utf8)
            .write(to: source)
        for (name, path) in [("two_sessions", examples.appendingPathComponent("two_sessions.c").path), ("version", source.path)] {
            let out = dir.appendingPathComponent(name).path
            let cc = try Tools.run("/bin/sh", ["-c", "\(Self.cc) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o '\(out)' '\(path)' "
                                               + "$(\(env) pkg-config --cflags --libs rtcshare) "
                                               + "-Wl,-rpath,'\(root.path)/usr/lib/\(Self.triplet)' -lpthread -lm"])
            #expect(cc.status == 0, "cc \(name): \(cc.stderr)")
        }
        let program = try Self.runInstalled(dir.appendingPathComponent("version").path, [])
        #expect(String(decoding: program.stdout, as: UTF8.self) == "\(RTCShareVersion.current) (abi 1)\n", "\(program.stderr)")
        // It is the installed library that ran, not one from the build tree (arm64: the rpath
        // above is the only place an aarch64 librtcshare.so is looked for).
        guard Self.architecture == "amd64" else { return }
        let ldd = try Tools.run("/usr/bin/ldd", [dir.appendingPathComponent("version").path])
        #expect(String(decoding: ldd.stdout, as: UTF8.self).contains("\(root.path)/usr/lib/\(Self.triplet)/librtcshare.so"))
    }
}
