// `import RTCShare` is all an embedder writes. The library's public API names types of the
// layers below it — MediaDuration, Orientation, PixelFormat and VideoCodecChoice (Core),
// SocketAddress (IO), TransportStats and SessionDescription (RTP), TransportState (Transport),
// WHIPToken and the failures of ConnectionFailure (WHIP, ICE, DTLS), the Y4M header and WAV format of its sources (Media)
// — and a caller who had to import each of those modules to spell them would depend on how
// the package happens to be cut into modules. The C modules stay private: no public
// declaration uses their types.
@_exported import RTCShareCore
@_exported import RTCShareDTLS
@_exported import RTCShareICE
@_exported import RTCShareIO
@_exported import RTCShareMedia
@_exported import RTCShareRTP
@_exported import RTCShareTransport
@_exported import RTCShareWHIP
