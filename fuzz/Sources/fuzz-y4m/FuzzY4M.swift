// Y4MHeader.parse: the stream header of a .y4m file or stdin (`--source y4m:`), untrusted.
// Input: the header line; as the reader does, only the bytes before the first newline are
// passed (the whole input too, so a line with no newline is covered as well).

import FuzzSupport
import RTCShareMedia

@main
enum FuzzY4M {
    static func main() { runLibFuzzer(fuzzY4M) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzY4M(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let line = bytes.firstIndex(of: UInt8(ascii: "\n")).map { UnsafeRawBufferPointer(rebasing: bytes[..<$0]) }
    check(line ?? bytes)
    if line != nil { check(bytes) }
    return 0
}

private func check(_ line: UnsafeRawBufferPointer) {
    do {
        let h = try Y4MHeader.parse(line)
        // Documented: sides 1...16384, a frame rate of 0/0 or two positive parts up to 10^6.
        fuzzCheck((1...Y4MHeader.maxSide).contains(h.width) && (1...Y4MHeader.maxSide).contains(h.height),
                  "Y4M size \(h.width)x\(h.height) accepted")
        fuzzCheck((h.frameRateNumerator == 0 && h.frameRateDenominator == 0)
                      || (1...1_000_000).contains(h.frameRateNumerator) && (1...1_000_000).contains(h.frameRateDenominator),
                  "Y4M rate \(h.frameRateNumerator):\(h.frameRateDenominator) accepted")
        fuzzCheck(line.count <= Y4MHeader.maxHeaderLength, "Y4M header of \(line.count) bytes accepted")
        consume(h.frameBytes)
        consume(h.interlaced)
    } catch {
        consumeDescription(error)
    }
}
