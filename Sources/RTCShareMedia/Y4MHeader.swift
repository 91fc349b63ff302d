/// The stream header of a YUV4MPEG2 file: `YUV4MPEG2 W<w> H<h> F<n>:<d> [I..] [A..] [C..] [X..]\n`.
/// Input is untrusted (a file or stdin): every field is bounds-checked and a bad header is one
/// clear error, never a trap. Only 4:2:0 chroma is accepted — it is what the encoder takes.
public struct Y4MHeader: Equatable, Sendable {
    public var width: Int
    public var height: Int
    /// Frame rate as a fraction; 0/0 when the header does not say.
    public var frameRateNumerator: Int
    public var frameRateDenominator: Int
    /// Whether the header declared interlacing other than progressive (`Ip`/`I?`).
    public var interlaced: Bool

    /// Why a header was refused.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notYUV4MPEG2
        case headerTooLong
        case missingSize
        case badField(String)
        case unsupportedChroma(String)

        public var description: String {
            switch self {
            case .notYUV4MPEG2: "not a YUV4MPEG2 stream (it must start with 'YUV4MPEG2 ')"
            case .headerTooLong: "YUV4MPEG2 header longer than 1024 bytes or not ended by a newline"
            case .missingSize: "YUV4MPEG2 header has no W (width) or H (height)"
            case .badField(let f): "YUV4MPEG2 header field '\(f)' is malformed or out of range"
            case .unsupportedChroma(let c): "YUV4MPEG2 chroma '\(c)' is not supported (only 4:2:0)"
            }
        }
    }

    /// Longest header line accepted, newline excluded.
    public static let maxHeaderLength = 1024
    /// Largest side accepted.
    public static let maxSide = 16384

    /// Parses the header line (without its newline).
    public static func parse(_ line: some Collection<UInt8>) throws(ParseError) -> Y4MHeader {
        guard line.count <= maxHeaderLength else { throw .headerTooLong }
        let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard let magic = fields.first, magic.elementsEqual("YUV4MPEG2".utf8) else {
            throw .notYUV4MPEG2
        }
        var header = Y4MHeader(width: 0, height: 0, frameRateNumerator: 0, frameRateDenominator: 0,
                               interlaced: false)
        for field in fields.dropFirst() {
            let text = String(decoding: field, as: UTF8.self)
            let value = text.dropFirst()
            switch field.first {
            case UInt8(ascii: "W"):
                guard let w = Int(value), w > 0, w <= maxSide else { throw .badField(text) }
                header.width = w
            case UInt8(ascii: "H"):
                guard let h = Int(value), h > 0, h <= maxSide else { throw .badField(text) }
                header.height = h
            case UInt8(ascii: "F"):
                let parts = value.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]),
                      n > 0, d > 0, n <= 1_000_000, d <= 1_000_000 else { throw .badField(text) }
                header.frameRateNumerator = n
                header.frameRateDenominator = d
            case UInt8(ascii: "I"):
                guard value.count == 1, "ptbm?".contains(value) else { throw .badField(text) }
                header.interlaced = value != "p" && value != "?"
            case UInt8(ascii: "C"):
                guard value.hasPrefix("420") else { throw .unsupportedChroma(String(value)) }
            case UInt8(ascii: "A"), UInt8(ascii: "X"):
                continue  // pixel aspect and extensions: not needed to read the pixels
            default:
                throw .badField(text)
            }
        }
        guard header.width > 0, header.height > 0 else { throw .missingSize }
        return header
    }

    /// Bytes of one frame's pixels (I420, no padding).
    public var frameBytes: Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }
}
