// One datagram as the ICE agent receives it: looksLikeSTUN (the RFC 7983 demultiplexer's test),
// STUNMessage.parse, the MESSAGE-INTEGRITY and FINGERPRINT checks over the same bytes, the
// accessors ICE reads, and the message written again (with and without both checks) and parsed
// once more.
//
// Oracles (all documented in the sources):
// - looksLikeSTUN agrees with the parser: whatever parses has the cookie and a full header, so
//   the test says yes exactly when the first byte is 0...3; when the test says yes, the parser
//   never refuses the cookie or the type's top bits.
// - Where the two checks lie: MESSAGE-INTEGRITY inside the message, FINGERPRINT its last
//   8 bytes, after MESSAGE-INTEGRITY; offsets 4-aligned.
// - verifyIntegrity / verifyFingerprint never trap, on the bytes or on any prefix of them; a
//   prefix that cuts the attribute off fails the check.
// - Attribute limits hold (ERROR-CODE 300...699, USERNAME ≤ 513 bytes, text ≤ 763), and an
//   address's text form parses back to the same address.
// - Round trip: the parsed message writes (size() bytes; refused only past the 16-bit length)
//   and parses back to the same type, transaction ID and attributes, with no unknown
//   attributes; written with a key and FINGERPRINT, both verify, and writing again gives the
//   same bytes. A buffer one byte short is refused without a write past it.

import FuzzSupport
import RTCShareICE

@main
enum FuzzSTUN {
    static func main() { runLibFuzzer(fuzzSTUN) }
}

/// RFC 5769's password (its vectors verify with it), and a key longer than SHA-1's 64-byte
/// block, which HMAC hashes first.
private let vectorKey = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)
private let longKey = [UInt8](repeating: 0x5A, count: 100)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSTUN(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let looks = looksLikeSTUN(bytes)
    consume(looks)
    let parsed: STUNParsedMessage
    do {
        parsed = try STUNMessage.parse(bytes)
    } catch {
        let why = error.description
        consume(why)
        if looks {
            fuzzCheck(!why.contains("cookie") && !why.contains("top bits") && !why.contains("20-byte header"),
                      "looksLikeSTUN accepted what the parser refuses as not STUN: \(why)")
        }
        return 0
    }
    fuzzCheck(looks == (bytes[0] <= 3), "looksLikeSTUN \(looks) for a parsed message with first byte \(bytes[0])")
    if parsed.message.type.method < 0x100 { fuzzCheck(looks, "method \(parsed.message.type.method) not taken for STUN") }
    checkLayout(parsed, bytes)
    verifyChecks(parsed, bytes)
    readAttributes(parsed.message)
    roundTrip(parsed)
    return 0
}

private func checkLayout(_ p: STUNParsedMessage, _ bytes: UnsafeRawBufferPointer) {
    let n = bytes.count
    let type = p.message.type
    let field = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
    fuzzCheck(type.rawValue == field && STUNMessageType(rawValue: field) == type, "type \(type) from 0x\(field)")
    fuzzCheck(p.message.transactionID.description.utf8.count == 24, "transaction ID text")
    fuzzCheck((p.integrityOffset == nil) == (p.integrity == nil), "MESSAGE-INTEGRITY offset without value")
    fuzzCheck((p.fingerprintOffset == nil) == (p.fingerprint == nil), "FINGERPRINT offset without value")
    if let at = p.integrityOffset {
        fuzzCheck(at >= 20 && at % 4 == 0 && at + 24 <= n, "MESSAGE-INTEGRITY at \(at) of \(n)")
    }
    if let at = p.fingerprintOffset {
        fuzzCheck(at == n - 8, "FINGERPRINT at \(at) of \(n), not last")
        if let mi = p.integrityOffset { fuzzCheck(mi + 24 <= at, "FINGERPRINT at \(at) before MESSAGE-INTEGRITY \(mi)") }
    }
    // Known attributes take as many bytes as they did on the wire, so they fit in what came.
    let known = p.message.size(integrity: p.integrityOffset != nil, fingerprint: p.fingerprintOffset != nil)
    fuzzCheck(known <= n, "\(known) bytes of known attributes in a \(n)-byte message")
    for code in p.unknownComprehensionRequired { fuzzCheck(code < 0x8000, "unknown 0x\(code) listed as required") }
}

private func verifyChecks(_ p: STUNParsedMessage, _ bytes: UnsafeRawBufferPointer) {
    for key in [vectorKey, [], longKey] { consume(p.verifyIntegrity(bytes, key: key)) }
    let fingerprintOK = p.verifyFingerprint(bytes)
    consume(fingerprintOK)
    if p.fingerprintOffset == nil { fuzzCheck(!fingerprintOK, "FINGERPRINT verified without one") }
    if p.integrityOffset == nil { fuzzCheck(!p.verifyIntegrity(bytes, key: vectorKey), "integrity verified without one") }
    // Shorter buffers than the parse saw (callers may pass the wrong bytes): no trap, and a
    // check whose attribute is cut off fails.
    for cut in Set([0, 19, 20, bytes.count / 2, bytes.count - 1, p.integrityOffset ?? 0]) where cut < bytes.count && cut >= 0 {
        let prefix = UnsafeRawBufferPointer(rebasing: bytes[..<cut])
        let mi = p.verifyIntegrity(prefix, key: vectorKey)
        if let at = p.integrityOffset, cut < at + 24 { fuzzCheck(!mi, "integrity verified on \(cut) of \(bytes.count) bytes") }
        fuzzCheck(!p.verifyFingerprint(prefix), "FINGERPRINT verified on \(cut) of \(bytes.count) bytes")
    }
}

private func readAttributes(_ m: STUNMessage) {
    for a in m.attributes {
        fuzzCheck(a.size % 4 == 0 && a.size == 4 + (a.valueSize + 3) / 4 * 4, "attribute \(a) size \(a.size)")
        consume(a.code)
        switch a {
        case .mappedAddress(let x), .xorMappedAddress(let x), .xorRelayedAddress(let x), .xorPeerAddress(let x):
            checkAddress(x)
        case .username(let s):
            fuzzCheck(s.utf8.count <= STUNAttribute.maxUsernameBytes, "USERNAME of \(s.utf8.count) bytes")
        case .software(let s), .realm(let s), .nonce(let s):
            fuzzCheck(s.utf8.count <= STUNAttribute.maxTextBytes, "text attribute of \(s.utf8.count) bytes")
        case .passwordAlgorithms(let bytes):
            fuzzCheck(bytes.count % 4 == 0 && bytes.count <= STUNAttribute.maxTextBytes, "PASSWORD-ALGORITHMS of \(bytes.count)")
        case .lifetime(let v):
            consume(v)
        case .requestedTransport(let v):
            consume(v)
        case .channelNumber(let v), .passwordAlgorithm(let v):
            consume(v)
        case .errorCode(let code, let reason):
            fuzzCheck((300...699).contains(code), "ERROR-CODE \(code)")
            fuzzCheck(reason.utf8.count <= STUNAttribute.maxTextBytes, "error reason of \(reason.utf8.count) bytes")
        case .unknownAttributes(let codes):
            consume(codes.count)
        case .priority(let v):
            consume(v)
        case .iceControlled(let t), .iceControlling(let t):
            consume(t)
        case .useCandidate:
            consume(1)
        }
    }
    consume(m.username ?? "")
    consume(m.xorMappedAddress?.port ?? 0)
    consume(m.mappedAddress?.port ?? 0)
    consume(m.priority ?? 0)
    consume(m.useCandidate)
    consume(m.iceControlling ?? 0)
    consume(m.iceControlled ?? 0)
    consume(m.errorCode ?? 0)
    consumeDescription(m.type)
}

/// The text forms of an address parse back to it.
private func checkAddress(_ a: ICEAddress) {
    let text = a.description
    do {
        let again = try ICEAddress(parsing: text)
        fuzzCheck(again == a, "'\(text)' parses to \(again)")
        let host = try ICEAddress(host: a.host, port: a.port)
        fuzzCheck(host == a, "host '\(a.host)' parses to \(host)")
    } catch {
        fuzzCheck(false, "address text '\(text)' does not parse: \(error)")
    }
}

/// `m` written with the options, or nil when the writer refuses (which must be for the size).
private func written(_ m: STUNMessage, key: [UInt8]?, fingerprint: Bool) -> [UInt8]? {
    let size = m.size(integrity: key != nil, fingerprint: fingerprint)
    let fits = size - 20 <= 0xFFFC
    // One byte short: refused, nothing written past the buffer (ASan watches the allocation).
    let short = UnsafeMutableRawBufferPointer.allocate(byteCount: size - 1, alignment: 8)
    defer { short.deallocate() }
    do {
        _ = try m.write(into: short, integrityKey: key, fingerprint: fingerprint)
        fuzzCheck(false, "\(size)-byte message written into \(size - 1) bytes")
    } catch {
        fuzzCheck(error == .bufferTooSmall(needed: size, available: size - 1) || !fits, "short buffer: \(error)")
    }
    var out = [UInt8](repeating: 0xEE, count: size)
    let ok = out.withUnsafeMutableBytes { b -> Bool in
        do {
            let n = try m.write(into: b, integrityKey: key, fingerprint: fingerprint)
            fuzzCheck(fits, "\(size)-byte message written, past the 16-bit length")
            fuzzCheck(n == size, "wrote \(n) bytes, size() says \(size)")
            return true
        } catch {
            fuzzCheck(!fits, "parsed message does not write: \(error)")
            return false
        }
    }
    return ok ? out : nil
}

private func reparsed(_ bytes: [UInt8], _ what: String) -> STUNParsedMessage? {
    bytes.withUnsafeBytes { b in
        do {
            return try STUNMessage.parse(b)
        } catch {
            fuzzCheck(false, "written message (\(what)) does not parse: \(error)")
            return nil
        }
    }
}

private func roundTrip(_ p: STUNParsedMessage) {
    let m = p.message
    // Plain: the attributes only (the parse is the length check of the writer, too).
    if let plain = written(m, key: nil, fingerprint: false), let q = reparsed(plain, "plain") {
        fuzzCheck(q.message == m, "\(m) read back as \(q.message)")
        fuzzCheck(q.integrityOffset == nil && q.fingerprintOffset == nil && q.unknownComprehensionRequired.isEmpty,
                  "plain message read back with checks or unknown attributes")
        plain.withUnsafeBytes { b in fuzzCheck(looksLikeSTUN(b) == (m.type.method < 0x100), "looksLikeSTUN of written \(m.type)") }
    }
    // As ICE sends it: MESSAGE-INTEGRITY and FINGERPRINT appended.
    guard let full = written(m, key: vectorKey, fingerprint: true), let q = reparsed(full, "integrity, fingerprint") else { return }
    fuzzCheck(q.message == m, "\(m) read back as \(q.message) (integrity, fingerprint)")
    fuzzCheck(q.integrityOffset == full.count - 32 && q.fingerprintOffset == full.count - 8 && q.unknownComprehensionRequired.isEmpty,
              "checks at \(String(describing: q.integrityOffset)), \(String(describing: q.fingerprintOffset)) of \(full.count)")
    full.withUnsafeBytes { b in
        fuzzCheck(q.verifyIntegrity(b, key: vectorKey), "written MESSAGE-INTEGRITY does not verify")
        fuzzCheck(!q.verifyIntegrity(b, key: longKey), "MESSAGE-INTEGRITY verifies with another key")
        fuzzCheck(q.verifyFingerprint(b), "written FINGERPRINT does not verify")
    }
    if let again = written(q.message, key: vectorKey, fingerprint: true) {
        fuzzCheck(again == full, "writing the read-back message gives other bytes")
    }
}
