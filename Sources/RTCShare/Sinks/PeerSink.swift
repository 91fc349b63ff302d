import RTCShareCore
import RTCShareIO
import RTCShareMedia
import RTCShareRTP
import RTCShareTransport

/// `--peer host:port`: the share as RTP over SRTP to one receiver, kept healthy with its RTCP.
///
/// This is the IO edge of the send path: the sockets, the clock, and the routes that map each
/// datagram of the sans-IO `Transport` — here a plain one: the RTP send core (packetizing,
/// history, RTX, SRTP, the RTCP schedule and feedback) without ICE or DTLS — to a socket and an
/// address. Video RTP and its RTCP go to the video peer, audio to
/// the audio peer; RTCP is muxed on the RTP ports unless `separateRTCPPorts` (then from sockets
/// of its own to port+1).
///
/// Feedback is read between frames on the pipeline thread (`service`), or when the event loop
/// says a socket is readable, so nothing here is shared between threads.
public final class PeerSink: MediaSink, TransportOutput {
    public let name: String
    public let configuration: PeerConfiguration
    /// The transport core: everything about RTP but the sockets.
    public let transport: Transport<SystemRandomNumberGenerator>
    public var sender: RTPSender { transport.sender! }
    /// RTCP CNAME of both streams (random, so receivers can pair audio and video).
    public var cname: String { sender.cname }
    public var video: RTPStream { sender.video }
    public var audio: RTPStream? { sender.audio }
    public var rtx: RTXPacketizer? { sender.rtx }

    private let videoSocket: UDPSocket
    private let audioSocket: UDPSocket?
    private let videoRTCPSocket: UDPSocket?
    private let audioRTCPSocket: UDPSocket?
    /// One incoming datagram at a time (larger than any RTCP a receiver sends).
    private let inbox: UnsafeMutableRawBufferPointer
    /// Whether the start-up's pages are still to be let go (`releasesStartupCodePages`).
    private var startupPagesHeld: Bool

    /// Bytes of the history and its index, from the budget (the planner counts them).
    public static func budgetBytes(_ configuration: PeerConfiguration) -> Int {
        RTPSender.budgetBytes(historyBytes: configuration.historyBytes)
    }

    /// What the sink takes outside the budget: its two packet buffers (a few KiB) and, with
    /// SRTP, libsrtp2 with the NSS crypto library Debian builds it on (NSS_NoDB_Init loads
    /// softokn and freebl: 2.85 MiB of pages once protecting; the two contexts are ~100 KiB)
    /// and the RTP send code of the binary. Measured (release build, `/proc/PID/smaps`
    /// mid-share) as the resident size of a `--peer` share less the same share to a file, less
    /// the history: 3.64 MiB at 640x360, 4.27 at 1280x720.
    public static func heapBytes(_ configuration: PeerConfiguration) -> Int {
        configuration.protection == nil ? 64 << 10 : (395 << 20) / 100
    }

    /// What a `--peer` share's resident size loses when, its first frame sent, it lets go of the
    /// pages only its start ran (`PeerConfiguration.releasesStartupCodePages`). Measured
    /// (release build, `planner_case.py`, peak RSS against the same shares before, medians of 3):
    /// 1280x720@20 with audio 30.0 → 24.9 MiB, 1920x1080 VP8 47.1 → 42.0, H.264 37.2 → 32.3;
    /// 4.0 MiB against the plan's running figures (which were 0.6–1.5 MiB under them before).
    public static let startupCodeReleasedBytes = 4 << 20

    /// What the share lets go of once its first frame is out (the planner takes it off the
    /// running share and counts it before); 0 when it keeps the pages.
    public static func releasedStartupBytes(_ configuration: PeerConfiguration) -> Int {
        configuration.releasesStartupCodePages ? startupCodeReleasedBytes : 0
    }

    /// Most datagrams read in one `service` call, so a flood cannot starve the pipeline.
    static let maxDatagramsPerService = 64

    /// The sender core's wire choices for this configuration.
    public static func senderConfiguration(_ configuration: PeerConfiguration) -> RTPSenderConfiguration {
        var wire = RTPSenderConfiguration()
        wire.mtu = configuration.mtu
        wire.protection = configuration.protection.map { .keys(local: $0, remote: $0) } ?? .insecure
        wire.videoPayloadType = configuration.videoPayloadType
        wire.videoCodec = configuration.videoCodec
        wire.rtxPayloadType = configuration.usesRTX ? configuration.videoRTXPayloadType : nil
        wire.audioPayloadType = configuration.sendsAudio ? PeerConfiguration.opusPayloadType : nil
        wire.absSendTimeID = PeerConfiguration.absSendTimeID
        wire.transportSequenceID = PeerConfiguration.transportSequenceID
        wire.videoOrientationID = configuration.signalsOrientation ? PeerConfiguration.videoOrientationID : nil
        wire.historyBytes = configuration.historyBytes
        wire.wallClockOffsetMicroseconds = WallClock.nowMicroseconds() - MonotonicClock.now().microseconds
        return wire
    }

    public init(configuration: PeerConfiguration, budget: MemoryBudget) throws(ShareError) {
        self.configuration = configuration
        startupPagesHeld = configuration.releasesStartupCodePages
        name = "peer \(configuration.videoPeer)"
        do {
            transport = Transport(sender: try RTPSender(configuration: Self.senderConfiguration(configuration),
                                                        budget: budget, random: SystemRandomNumberGenerator()))
        } catch {
            if case .outOfMemory = error { throw .doesNotFit("\(error)") }
            // libsrtp2 that cannot initialise (its crypto backend short of memory) is no setting.
            if case .srtp = error { throw .resource("RTP: \(error)") }
            throw .invalidConfiguration("RTP: \(error)")
        }
        do {
            videoSocket = try UDPSocket(for: configuration.videoPeer)
            audioSocket = configuration.sendsAudio ? try UDPSocket(for: configuration.audioPeer) : nil
            videoRTCPSocket = configuration.separateRTCPPorts ? try UDPSocket(for: configuration.videoPeer) : nil
            audioRTCPSocket = configuration.separateRTCPPorts && configuration.sendsAudio
                ? try UDPSocket(for: configuration.audioPeer) : nil
        } catch {
            throw .output("socket for \(configuration.videoPeer): \(error)")
        }
        inbox = .allocate(byteCount: 2048 + SRTPProfile.requiredTailroom, alignment: 16)
    }

    deinit { inbox.deallocate() }

    public var transportStats: TransportStats? { transport.stats }

    /// The sockets feedback arrives on, for the event loop to watch.
    public var descriptors: [Int32] {
        [videoSocket, audioSocket, videoRTCPSocket, audioRTCPSocket].compactMap { $0?.descriptor }
    }

    /// Sends one datagram of the core on the socket and to the address of its route.
    public func transmit(_ bytes: UnsafeRawBufferPointer, to destination: TransportDestination) {
        guard case .route(let route) = destination else { return }
        let socket: UDPSocket
        let peer: SocketAddress
        switch route {
        case .videoRTP: (socket, peer) = (videoSocket, configuration.videoPeer)
        case .videoRTCP: (socket, peer) = (videoRTCPSocket ?? videoSocket, rtcpPeer(configuration.videoPeer))
        case .audioRTP: (socket, peer) = (audioSocket ?? videoSocket, configuration.audioPeer)
        case .audioRTCP: (socket, peer) = (audioRTCPSocket ?? audioSocket ?? videoSocket, rtcpPeer(configuration.audioPeer))
        }
        if case .sent = socket.send(bytes, to: peer) { return }
        // A full send buffer, or an ICMP error from a receiver not yet listening.
        transport.transmitFailed()
    }

    private func rtcpPeer(_ peer: SocketAddress) -> SocketAddress {
        configuration.separateRTCPPorts ? peer.with(port: peer.port + 1) : peer
    }

    // MARK: Sending media

    public func send(video frame: OutgoingVideoFrame) throws(ShareError) {
        do {
            try transport.sendVideo(frame.bytes, mediaTimestamp: frame.mediaTimestamp, orientation: frame.orientation,
                                    at: MonotonicClock.now(), output: self)
        } catch {
            throw .pipeline("RTP video: \(error)")
        }
        // The first frame is out: what only the start ran goes out of the resident set.
        if startupPagesHeld {
            startupPagesHeld = false
            StartupCodePages.release()
        }
    }

    public func send(audio packet: OutgoingAudioPacket) throws(ShareError) {
        do {
            try transport.sendAudio(packet.bytes, mediaTimestamp: packet.mediaTimestamp, samples: packet.samples,
                                    at: MonotonicClock.now(), output: self)
        } catch {
            throw .pipeline("RTP audio: \(error)")
        }
    }

    // MARK: Feedback and reports

    public func service(at now: MediaTime) throws(ShareError) -> TransportRequests {
        for socket in [videoSocket, audioSocket, videoRTCPSocket, audioRTCPSocket] {
            if let socket { drain(socket, now: now) }
        }
        transport.tick(at: now, output: self)
        return transport.takeRequests(at: now)
    }

    public func maximumBitrateChanged(kbps: Int, at now: MediaTime) {
        transport.setMaximumBitrate(kbps: kbps, at: now)
    }

    /// Hands what is waiting on `socket` to the core (a bounded number per call).
    private func drain(_ socket: UDPSocket, now: MediaTime) {
        for _ in 0..<Self.maxDatagramsPerService {
            guard case .datagram(let count, _) = socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: inbox[0..<2048]))
            else { return }
            transport.handle(datagram: inbox, count: count, from: nil, at: now, output: self)
        }
    }

    public func finish(_ reason: FinishReason) throws(ShareError) {
        transport.close(at: MonotonicClock.now(), output: self)
    }
}
