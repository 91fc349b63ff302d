import Foundation
import RTCShare
import Testing

/// The portal's restore token on disk: written whole (mode 0600, folders made 0700), read back,
/// and anything that is not a token read as none.
@Suite struct PortalRestoreTokenTests {
    @Test func aTokenWrittenIsReadBackPrivately() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = PortalRestoreToken(path: dir.path + "/state/rtcshare/token")
        #expect(file.read() == "")
        try file.write("8ac129d3-17b7-4f19-b000-cd7c1a344f75")
        #expect(file.read() == "8ac129d3-17b7-4f19-b000-cd7c1a344f75")
        try file.write("2687b8aa-339d-472c-bbee-87851eb1d69e")
        #expect(file.read() == "2687b8aa-339d-472c-bbee-87851eb1d69e")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: dir.path + "/state/rtcshare")
        #expect(folder[.posixPermissions] as? Int == 0o700)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".new"))
    }

    @Test func whatIsNotATokenReadsAsNone() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.path + "/token"
        try Data("two words\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(PortalRestoreToken(path: path).read() == "")
        try Data([0xff, 0xfe, 0x0a]).write(to: URL(fileURLWithPath: path))
        #expect(PortalRestoreToken(path: path).read() == "")
        try Data(String(repeating: "a", count: 600).utf8).write(to: URL(fileURLWithPath: path))
        #expect(PortalRestoreToken(path: path).read() == "")
    }

    @Test func anUnwritablePlaceIsOneLine() {
        let file = PortalRestoreToken(path: "/proc/rtcshare-no/token")
        #expect(throws: SourceError.self) { try file.write("x") }
    }
}
