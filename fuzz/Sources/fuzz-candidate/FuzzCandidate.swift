// Remote candidates and addresses as they come in SDP or trickle: ICECandidate.parse on the text
// (`a=candidate:…` or `candidate:…`), ICEAddress(parsing:) on the same text (`host:port`,
// `[v6-host]:port`) and ICEAddress(host:port:) on it as a bare host. Numeric only: nothing
// is resolved.
//
// Oracles (all documented in the sources):
// - An accepted candidate has a 1...32 ice-char foundation, component 1...256 and priority
//   1...2^31-1; its sdpAttribute parses back to the same candidate, with or without `a=`, and
//   with the line's CRLF still on (CR and LF separate fields like spaces do).
// - An accepted address's text forms (description, host) parse back to the same address, and
//   the family is IPv6 exactly when the host text has a ':'.

import FuzzSupport
import RTCShareICE

@main
enum FuzzCandidate {
    static func main() { runLibFuzzer(fuzzCandidate) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCandidate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    readCandidate(text)
    do {
        let a = try ICEAddress(parsing: text)
        checkAddress(a)
    } catch {
        consume(error.description)
    }
    do {
        let a = try ICEAddress(host: text, port: 9)
        fuzzCheck(a.port == 9, "port \(a.port)")
        fuzzCheck((a.family == .ipv6) == text.utf8.contains(UInt8(ascii: ":")), "family \(a.family) for '\(text)'")
        checkAddress(a)
    } catch {
        consume(error.description)
    }
    return 0
}

private func isIceChar(_ c: UInt8) -> Bool {
    (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
        || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "+") || c == UInt8(ascii: "/")
}

private func readCandidate(_ text: String) {
    let parsed: ICECandidate?
    do {
        parsed = try ICECandidate.parse(sdpAttribute: text)
    } catch {
        consume(error.description)
        return
    }
    guard let c = parsed else { return consume(0) }  // TCP, or a name: ignored
    fuzzCheck((1...32).contains(c.foundation.utf8.count) && c.foundation.utf8.allSatisfy(isIceChar),
              "foundation '\(c.foundation)'")
    fuzzCheck((1...256).contains(c.component), "component \(c.component)")
    fuzzCheck((1...0x7FFF_FFFF).contains(c.priority), "priority \(c.priority)")
    checkAddress(c.address)
    if let r = c.relatedAddress { checkAddress(r) }
    consume(c.type.typePreference)
    let line = c.sdpAttribute
    for form in [line, "a=" + line, "a=" + line + "\r\n"] {
        do {
            let again = try ICECandidate.parse(sdpAttribute: form)
            fuzzCheck(again == c, "'\(form)' parses to \(String(describing: again)), not \(c)")
        } catch {
            fuzzCheck(false, "'\(form)' does not parse: \(error)")
        }
    }
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
