// One socket carries STUN, DTLS and SRTP/SRTCP; RFC 7983 §7 tells them apart by the first
// byte: 0...3 is STUN, 20...63 DTLS, 128...191 RTP/RTCP. STUN's magic cookie at bytes 4...7
// makes the guess firm (a stray datagram starting with 0...3 is not taken for STUN).

/// Whether `bytes` should be handed to the ICE agent: at least a STUN header, first byte
/// 0...3 and the magic cookie in place. Cheap; reads 8 bytes at most.
public func looksLikeSTUN(_ bytes: UnsafeRawBufferPointer) -> Bool {
    bytes.count >= STUNMessage.headerSize && bytes[0] <= 3 && bytes.stunU32(4) == STUNMessage.magicCookie
}
