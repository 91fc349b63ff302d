// SocketAddress(parsing:): `--peer`, `--audio-peer`, `--listen` text, `host:port` or
// `[v6-host]:port`. The constructor resolves the host with getaddrinfo, which for a name would
// go to DNS: a fuzzer must not do that. So the harness first runs the split alone (the internal
// `SocketAddress.split`, reached with @testable — debug builds are built for testing), and only
// calls the full constructor when the host is a numeric literal (getaddrinfo with
// AI_NUMERICHOST, local and fast; then the constructor's own lookup is numeric as well).
//
// Oracles: the port found is 1...65535; a parsed address has the family and port of its text
// and its description parses back to the same host and port.

import FuzzSupport
@testable import RTCShareIO
#if canImport(Glibc)
import Glibc
#endif

@main
enum FuzzAddr {
    static func main() { runLibFuzzer(fuzzAddr) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAddr(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let host: String
    let port: Int
    do {
        (host, port) = try SocketAddress.split(text)
    } catch {
        consume(error.description)
        return 0
    }
    fuzzCheck((1...65_535).contains(port), "port \(port) accepted")
    fuzzCheck(!host.isEmpty, "empty host accepted")
    guard let family = numericFamily(host) else { return 0 }  // a name: would resolve via DNS

    let address: SocketAddress
    do {
        address = try SocketAddress(parsing: text)
    } catch {
        fuzzCheck(false, "numeric '\(host)' port \(port) splits but does not parse: \(error)")
        return 0
    }
    fuzzCheck(address.family == family, "family \(address.family), literal is \(family)")
    fuzzCheck(address.port == port, "port \(address.port), text says \(port)")
    let description = address.description
    do {
        let again = try SocketAddress(parsing: description)
        fuzzCheck(again.host == address.host && again.port == address.port,
                  "'\(description)' parses to \(again)")
    } catch {
        fuzzCheck(false, "description '\(description)' does not parse: \(error)")
    }
    consume(address.with(port: 1 + port % 65_535).port)
    return 0
}

/// The family getaddrinfo gives `host` as a numeric literal (nothing is looked up), or nil
/// when it is not one. Same hints as SocketAddress(host:port:) plus AI_NUMERICHOST; IPv4
/// preferred like the constructor.
private func numericFamily(_ host: String) -> Int32? {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_family = AF_UNSPEC
    hints.ai_flags = AI_NUMERICHOST
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, "1", &hints, &list) == 0, let first = list else { return nil }
    defer { freeaddrinfo(list) }
    var family: Int32? = nil
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let e = entry {
        if e.pointee.ai_family == AF_INET { return AF_INET }
        if e.pointee.ai_family == AF_INET6 { family = AF_INET6 }
        entry = e.pointee.ai_next
    }
    return family
}
