import RTCShareCore

// RTP, RTCP and their payload formats read through the core's `ByteReader<RTPError>` and write
// through its `ByteWriter<RTPError>`: every load and store is bounds-checked there. The parsers
// still check the lengths their headers declare first, for an error that names the field; what
// is below only says what a read or write past the end is, should one get through.

extension RTPError: ByteReaderFailure, ByteWriterFailure {
    public static func readPastEnd(offset: Int, needed: Int, available: Int) -> RTPError {
        .truncated("\(needed) bytes at offset \(offset) run past the end (\(available) left)")
    }

    public static func writePastEnd(offset: Int, needed: Int, available: Int) -> RTPError {
        .bufferTooSmall(needed: offset + needed, available: available)
    }
}

/// The reader and writer of this module's wire types.
typealias RTPReader = ByteReader<RTPError>
typealias RTPWriter = ByteWriter<RTPError>
