import Foundation
@testable import RTCShareICE

/// Loads `Vectors/<name>.hex`: hex byte pairs; `#` starts a comment to the end of the line.
func vector(_ name: String) throws -> [UInt8] {
    guard let url = Bundle.module.url(forResource: name, withExtension: "hex", subdirectory: "Vectors") else {
        throw VectorError.missing(name)
    }
    var bytes = [UInt8]()
    for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
        let data = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        for token in data.split(separator: " ") {
            guard let b = UInt8(token, radix: 16) else { throw VectorError.badToken(String(token)) }
            bytes.append(b)
        }
    }
    return bytes
}

enum VectorError: Error { case missing(String), badToken(String) }

/// Writes `message` into a fresh array.
func written(_ message: STUNMessage, key: [UInt8]? = nil, fingerprint: Bool = false) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: message.size(integrity: key != nil, fingerprint: fingerprint))
    let n = try out.withUnsafeMutableBytes { (raw) throws(ICEError) -> Int in
        try message.write(into: raw, integrityKey: key, fingerprint: fingerprint)
    }
    precondition(n == out.count)
    return out
}

func parseSTUN(_ bytes: [UInt8]) throws -> STUNParsedMessage {
    try bytes.withUnsafeBytes { (raw) throws(ICEError) in try STUNMessage.parse(raw) }
}

let rfc5769Password = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)
let rfc5769ID = STUNTransactionID(high: 0xb7e7_a701, low: 0xbc34_d686_fa87_dfae)
