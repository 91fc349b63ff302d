import CRTCShareABI
import Glibc
import RTCShare
import Synchronization

// The C ABI (rtcshare.h): each function is a thin translation onto `ShareAgent` and
// `ProcessBudget`. Handles are retained Swift objects passed as opaque pointers; every argument
// is checked (NULL, range, struct_size) before use, and no Swift error or trap crosses into C:
// failures become RTCSHARE_E_* codes, with the detail kept as the session's last error.

// MARK: - Status codes

extension ShareError {
    /// The C status for this error.
    var status: Int32 {
        switch self {
        case .doesNotFit: RTCSHARE_E_DOES_NOT_FIT.rawValue
        case .source: RTCSHARE_E_SOURCE.rawValue
        case .output: RTCSHARE_E_OUTPUT.rawValue
        case .pipeline: RTCSHARE_E_PIPELINE.rawValue
        case .invalidConfiguration: RTCSHARE_E_INVALID_ARGUMENT.rawValue
        case .resource: RTCSHARE_E_RESOURCE.rawValue
        case .connection(let failure):
            switch (failure, failure.failureClass) {
            case (_, .unauthorized): RTCSHARE_E_UNAUTHORIZED.rawValue
            case (_, .resource): RTCSHARE_E_RESOURCE.rawValue
            case (.whip, .unavailable): RTCSHARE_E_SERVER_UNAVAILABLE.rawValue
            case (.whip, _): RTCSHARE_E_SERVER.rawValue
            case (.transport(.ice), _), (.transport(.localAddressGone), _), (.transport(.noLocalAddress), _):
                RTCSHARE_E_CONNECT.rawValue
            // A TURN certificate that does not verify is refused security; any other relay failure
            // (unreachable, no answer, the allocation lost) is a connection that could not be made.
            case (.transport(.relay), .refused): RTCSHARE_E_SECURITY_REFUSED.rawValue
            case (.transport(.relay), _): RTCSHARE_E_CONNECT.rawValue
            case (.transport(.dtls), .refused): RTCSHARE_E_SECURITY_REFUSED.rawValue
            case (.transport(.dtls), _), (.transport(.srtpKeys), _): RTCSHARE_E_SECURITY.rawValue
            case (.transport(.consentLost), _), (.transport(.dtlsClosed), _), (.transport(.peerUnreachable), _):
                RTCSHARE_E_PEER_GONE.rawValue
            }
        }
    }
}

/// The codes whose failure may pass: the same split as `FailureClass.retry`.
private let temporaryStatuses: Set<Int32> = [
    RTCSHARE_E_SERVER_UNAVAILABLE.rawValue, RTCSHARE_E_CONNECT.rawValue, RTCSHARE_E_SECURITY.rawValue,
    RTCSHARE_E_PEER_GONE.rawValue, RTCSHARE_E_RESOURCE.rawValue,
]

@_cdecl("rtcshare_status_is_temporary")
public func rtcshare_status_is_temporary(_ code: Int32) -> Int32 {
    temporaryStatuses.contains(code) ? 1 : 0
}

extension PushResult {
    var status: Int32 {
        switch self {
        case .accepted: RTCSHARE_OK.rawValue
        case .busy: RTCSHARE_E_BUSY.rawValue
        case .notRunning: RTCSHARE_E_NOT_RUNNING.rawValue
        case .invalid: RTCSHARE_E_INVALID_ARGUMENT.rawValue
        }
    }
}

/// C strings that live as long as the process (version, messages).
private enum StaticText {
    nonisolated(unsafe) static let version: UnsafeMutablePointer<CChar> = strdup("\(RTCShareVersion.current) (abi \(RTCSHARE_ABI_VERSION))")!
    nonisolated(unsafe) static let messages: [Int32: UnsafeMutablePointer<CChar>] = {
        let lines: [(rtcshare_status, String)] = [
            (RTCSHARE_OK, "ok"),
            (RTCSHARE_E_INVALID_ARGUMENT, "invalid argument"),
            (RTCSHARE_E_DOES_NOT_FIT, "does not fit the memory budget"),
            (RTCSHARE_E_SOURCE, "the source cannot be opened or failed"),
            (RTCSHARE_E_OUTPUT, "an output cannot be opened"),
            (RTCSHARE_E_PIPELINE, "encoding or sending failed"),
            (RTCSHARE_E_STATE, "not allowed in the session's state"),
            (RTCSHARE_E_BUSY, "busy: dropped"),
            (RTCSHARE_E_NOT_RUNNING, "the session is not running"),
            (RTCSHARE_E_UNAUTHORIZED, "the WHIP server refused the token"),
            (RTCSHARE_E_SERVER, "the WHIP exchange with the server failed: it refused the configuration, "
                + "or its answer cannot be used"),
            (RTCSHARE_E_CONNECT, "no ICE path to the server"),
            (RTCSHARE_E_SECURITY, "DTLS with the server failed"),
            (RTCSHARE_E_PEER_GONE, "the server went away"),
            (RTCSHARE_E_SERVER_UNAVAILABLE, "the WHIP exchange with the server failed for now (5xx, 408, 429, "
                + "a timeout, a refused connection): try again later"),
            (RTCSHARE_E_SECURITY_REFUSED, "DTLS with the server failed and cannot work with its answer"),
            (RTCSHARE_E_RESOURCE, "out of memory or address space, or a library cannot be loaded"),
        ]
        var table: [Int32: UnsafeMutablePointer<CChar>] = [:]
        for (code, text) in lines { table[code.rawValue] = strdup(text)! }
        return table
    }()
    nonisolated(unsafe) static let unknown: UnsafeMutablePointer<CChar> = strdup("unknown status")!
}

@_cdecl("rtcshare_version")
public func rtcshare_version() -> UnsafePointer<CChar> { UnsafePointer(StaticText.version) }

@_cdecl("rtcshare_error_message")
public func rtcshare_error_message(_ code: Int32) -> UnsafePointer<CChar> {
    UnsafePointer(StaticText.messages[code] ?? StaticText.unknown)
}

// MARK: - Process budget

@_cdecl("rtcshare_process_create")
public func rtcshare_process_create(_ capBytes: UInt64) -> OpaquePointer? {
    let cap = capBytes == 0 ? 50 << 20 : Int(clamping: capBytes)
    return OpaquePointer(Unmanaged.passRetained(ProcessBudget(capBytes: cap)).toOpaque())
}

@_cdecl("rtcshare_process_available_bytes")
public func rtcshare_process_available_bytes(_ process: OpaquePointer?) -> UInt64 {
    guard let process else { return 0 }
    let budget = Unmanaged<ProcessBudget>.fromOpaque(UnsafeRawPointer(process)).takeUnretainedValue()
    return UInt64(max(budget.availableBytes, 0))
}

@_cdecl("rtcshare_process_destroy")
public func rtcshare_process_destroy(_ process: OpaquePointer?) {
    guard let process else { return }
    Unmanaged<ProcessBudget>.fromOpaque(UnsafeRawPointer(process)).release()
}

// MARK: - Sessions

/// What a C handle points at: the agent, the caller's callback, the latest figures.
final class CSession: @unchecked Sendable {
    // @unchecked Sendable: `userData` is the caller's, passed back untouched; the rest is
    // immutable or behind mutexes.
    var agent: ShareAgent!
    let callback: rtcshare_event_callback?
    let userData: UnsafeMutableRawPointer?
    let latest = Mutex<(ShareStats, TransportStats?)>((ShareStats(), nil))
    let lastError = Mutex<String>("")
    let started = Atomic<Bool>(false)

    init(callback: rtcshare_event_callback?, userData: UnsafeMutableRawPointer?) {
        self.callback = callback
        self.userData = userData
    }

    func deliver(_ event: ShareEvent) {
        if case .progress(let p) = event { latest.withLock { $0 = (p.stats, p.transport) } }
        guard let callback else { return }
        var type: rtcshare_event_type
        var value: Int64 = 0
        var text: String?
        switch event {
        case .starting(let source, let output, let fps, let codec):
            type = RTCSHARE_EVENT_STARTING
            text = "\(source) -> \(codec) \(output) at \(fps) fps"
        case .started: type = RTCSHARE_EVENT_STARTED
        case .paused: type = RTCSHARE_EVENT_PAUSED
        case .resumed: type = RTCSHARE_EVENT_RESUMED
        case .sourceStalled(let attempt):
            type = RTCSHARE_EVENT_SOURCE_STALLED
            value = Int64(attempt)
        case .sourceRecovered(let ms):
            type = RTCSHARE_EVENT_SOURCE_RECOVERED
            value = ms
        case .progress(let p):
            type = RTCSHARE_EVENT_PROGRESS
            value = Int64(p.stats.encodedFrames)
        case .notice(let line):
            type = RTCSHARE_EVENT_NOTICE
            text = line
        case .receiverSilent(let output, let ms):
            type = RTCSHARE_EVENT_RECEIVER_SILENT
            value = ms
            text = output
        case .receiverHeardAgain(let output, let ms):
            type = RTCSHARE_EVENT_RECEIVER_HEARD_AGAIN
            value = ms
            text = output
        case .receiverLeft(let output):
            type = RTCSHARE_EVENT_RECEIVER_LEFT
            text = output
        case .reconnecting(_, let attempt, let reason, _):
            type = RTCSHARE_EVENT_RECONNECTING
            value = Int64(attempt)
            text = reason
        case .reconnected(_, let ms):
            type = RTCSHARE_EVENT_RECONNECTED
            value = ms
        case .memoryPressure(let resident, _, let step):
            type = RTCSHARE_EVENT_MEMORY_PRESSURE
            value = Int64(resident)
            text = step.description
        case .finished(let reason):
            type = RTCSHARE_EVENT_FINISHED
            text = reason.description
            if case .failed(let error) = reason { lastError.withLock { $0 = error.description } }
        }
        var event = rtcshare_event(type: Int32(type.rawValue), value: value, text: nil)
        if let text {
            text.withCString { pointer in
                event.text = pointer
                callback(userData, &event)
            }
        } else {
            callback(userData, &event)
        }
    }

    func fill(_ out: UnsafeMutablePointer<rtcshare_stats>, _ stats: ShareStats, _ transport: TransportStats?) {
        var s = rtcshare_stats()
        s.elapsed_seconds = Double(stats.elapsed.microseconds) / 1_000_000
        s.source_frames = Int64(stats.sourceFrames)
        s.encoded_frames = Int64(stats.encodedFrames)
        s.repeated_frames = Int64(stats.repeatedFrames)
        s.keyframes = Int64(stats.keyframes)
        s.encoded_bytes = Int64(clamping: stats.encodedBytes)
        s.audio_packets = Int64(stats.audioPackets)
        s.target_bitrate_kbps = Int64(stats.targetBitrateKbps)
        s.packets_sent = Int64(transport?.packetsSent ?? 0)
        s.bytes_sent = Int64(clamping: transport?.bytesSent ?? 0)
        s.nacks_received = Int64(transport?.nacksReceived ?? 0)
        s.packets_retransmitted = Int64(transport?.packetsRetransmitted ?? 0)
        s.round_trip_us = transport?.roundTripMicroseconds ?? -1
        let push = agent.pushCounters
        s.pushed_accepted = Int64(push?.accepted ?? 0)
        s.pushed_dropped = Int64((push?.busy ?? 0) + (push?.notRunning ?? 0) + (push?.replaced ?? 0))
        s.wakeups = Int64(stats.wakeups)
        out.pointee = s
    }
}

private func session(_ handle: OpaquePointer?) -> CSession? {
    handle.map { Unmanaged<CSession>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    guard let pointer else { return nil }
    guard strnlen(pointer, 4096) < 4096 else { return nil }
    return String(validatingCString: pointer)
}

/// The library's configuration from the C one; nil with `error` set for anything out of range.
private func configuration(_ c: rtcshare_config, error: inout String) -> ShareAgent.Configuration? {
    var out = ShareAgent.Configuration()
    guard c.fps >= 1, c.fps <= 60, c.idle_fps >= 0, c.idle_fps <= c.fps,
          c.bitrate_kbps >= 50, c.bitrate_kbps <= 50_000, c.duration_seconds >= 0 else {
        error = "fps 1...60, idle_fps 0...fps, bitrate_kbps 50...50000, duration_seconds >= 0"
        return nil
    }
    out.share.framesPerSecond = Int(c.fps)
    out.share.idleFramesPerSecond = c.idle_fps > 0 ? Int(c.idle_fps) : nil
    out.share.bitrateKbps = Int(c.bitrate_kbps)
    out.share.reclaimEncoderStartupMemory = c.reclaim_encoder_memory != 0
    switch c.video_codec {
    case Int32(RTCSHARE_CODEC_AUTO.rawValue): out.share.videoCodec = .auto
    case Int32(RTCSHARE_CODEC_VP8.rawValue): out.share.videoCodec = .vp8
    case Int32(RTCSHARE_CODEC_H264.rawValue): out.share.videoCodec = .h264
    default:
        error = "video_codec must be RTCSHARE_CODEC_AUTO, _VP8 or _H264"
        return nil
    }
    if c.width != 0 || c.height != 0 {
        guard let size = PictureSize(parsing: "\(c.width)x\(c.height)") else {
            error = "width and height must be even, 16...4096 (or both 0 for auto)"
            return nil
        }
        out.share.outputSize = size
    }
    if c.duration_seconds > 0 { out.share.duration = .microseconds(Int64(c.duration_seconds * 1_000_000)) }
    out.share.ivfPath = string(c.ivf_path)
    out.share.keyframeInterval = .seconds(3)
    switch c.audio {
    case Int32(RTCSHARE_AUDIO_NONE.rawValue): break
    case Int32(RTCSHARE_AUDIO_PUSHED.rawValue): out.share.audio = AudioConfiguration(input: .pushed)
    case Int32(RTCSHARE_AUDIO_TESTTONE.rawValue): out.share.audio = AudioConfiguration(input: .testTone(frequency: 440))
    default:
        error = "audio must be RTCSHARE_AUDIO_NONE, _PUSHED or _TESTTONE"
        return nil
    }
    do {
        out.source = try ShareSourceChoice.parse(string(c.source) ?? "push", acceptsPush: true)
    } catch let e {
        error = "source \(e)"
        return nil
    }
    if case .pushed = out.source {
        guard let max = PictureSize(parsing: "\(c.max_width)x\(c.max_height)") else {
            error = "max_width and max_height must be even, 16...4096"
            return nil
        }
        out.source = .pushed(maxSize: max)
    } else if c.audio == Int32(RTCSHARE_AUDIO_PUSHED.rawValue) {
        error = "pushed audio needs the push source"
        return nil
    }
    if let url = string(c.whip_url) {
        guard string(c.peer) == nil else {
            error = "set peer or whip_url, not both"
            return nil
        }
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            error = "whip_url must be http:// or https://"
            return nil
        }
        var whip = WHIPConfiguration(url: url)
        do {
            if let token = string(c.whip_token) { whip.token = try WHIPToken(token) }
            if let bind = string(c.whip_bind) {
                whip.bindAddress = try SocketAddress(parsingBindAddress: bind)
            }
            if let stun = string(c.whip_stun) {
                do { whip.stunServers = [try SocketAddress(parsing: stun)] } catch {
                    throw SocketError("whip_stun: \(error)")
                }
            }
        } catch let e {
            error = "whip: \(e)"
            return nil
        }
        if let servers = string(c.whip_ice_servers) {
            do throws(ICEError) {
                for text in servers.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\n" }).prefix(9) {
                    let uri = try ICEServerURI(parsing: text)
                    if uri.isTURN {
                        let credentials = try TURNCredentials(username: string(c.whip_ice_username) ?? "",
                                                              password: string(c.whip_ice_credential) ?? "")
                        whip.turnServers.append(TURNServerConfiguration(uri: uri, credentials: credentials))
                    } else if uri.scheme == .stun, let address = uri.numericAddress, address.family == .ipv4 {
                        whip.stunServers.append(WHIPSink.socketAddress(address))
                    } else {
                        throw .invalidAddress("\(uri): a STUN server must be stun: with a numeric IPv4 address")
                    }
                }
            } catch let e {
                error = "whip_ice_servers: \(e)"
                return nil
            }
        }
        switch c.whip_ice_transport_policy {
        case 0: whip.iceTransportPolicy = .all
        case 1: whip.iceTransportPolicy = .relay
        default:
            error = "whip_ice_transport_policy must be 0 (all) or 1 (relay)"
            return nil
        }
        whip.iceCAFile = string(c.whip_ice_ca_file)
        switch c.whip_reconnect {
        case 0: whip.reconnect.limit = .forever
        case -1: whip.reconnect.limit = .off
        case 1...: whip.reconnect.limit = .attempts(Int(c.whip_reconnect))
        default:
            error = "whip_reconnect must be 0 (for ever), -1 (never) or a number of attempts"
            return nil
        }
        whip.sendsAudio = out.share.audio != nil
        whip.framesPerSecond = out.share.framesPerSecond
        out.transport = .whip(whip)
    } else if let peerText = string(c.peer) {
        var peer: PeerConfiguration
        do { peer = PeerConfiguration(videoPeer: try SocketAddress(parsing: peerText)) } catch let e {
            error = "peer: \(e)"
            return nil
        }
        peer.sendsAudio = out.share.audio != nil
        peer.usesRTX = c.rtx != 0
        peer.framesPerSecond = out.share.framesPerSecond
        if c.insecure == 0 {
            if let key = string(c.srtp_key) {
                do { peer.protection = try SRTPMasterKey(profile: .aesCM128HmacSHA1_80, base64: key) } catch let e {
                    error = "srtp_key: \(e)"
                    return nil
                }
            } else {
                peer.protection = SRTPMasterKey.generate(profile: .aesCM128HmacSHA1_80)
            }
        }
        out.transport = .peer(peer)
    } else if out.share.ivfPath == nil {
        error = "nothing to send to: set peer or ivf_path"
        return nil
    }
    return out
}

/// The `struct_size`s accepted: this header's, the ones before the ICE servers, `whip_reconnect`
/// and `whip_stun` were appended, and the one before `video_codec`.
private let configSizes: Set<Int> = [MemoryLayout<rtcshare_config>.size,
                                     MemoryLayout<rtcshare_config>.offset(of: \rtcshare_config.whip_ice_servers)!,
                                     MemoryLayout<rtcshare_config>.offset(of: \rtcshare_config.whip_reconnect)!,
                                     MemoryLayout<rtcshare_config>.offset(of: \rtcshare_config.whip_stun)!,
                                     MemoryLayout<rtcshare_config>.offset(of: \rtcshare_config.video_codec)!]

@_cdecl("rtcshare_session_create")
public func rtcshare_session_create(_ process: OpaquePointer?, _ config: UnsafePointer<rtcshare_config>?,
                                    _ callback: rtcshare_event_callback?, _ userData: UnsafeMutableRawPointer?,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let process, let config, let out, configSizes.contains(Int(config.pointee.struct_size)) else {
        return RTCSHARE_E_INVALID_ARGUMENT.rawValue
    }
    out.pointee = nil
    let budget = Unmanaged<ProcessBudget>.fromOpaque(UnsafeRawPointer(process)).takeUnretainedValue()
    var problem = ""
    // A caller built against an older header has a struct that ends where the first field it
    // lacks begins: read only what it has, and give the rest its default.
    var given = rtcshare_config()
    rtcshare_config_init(&given)
    let known = min(Int(config.pointee.struct_size), MemoryLayout<rtcshare_config>.size)  // checked above too
    withUnsafeMutableBytes(of: &given) { $0.baseAddress!.copyMemory(from: config, byteCount: known) }
    given.struct_size = UInt32(MemoryLayout<rtcshare_config>.size)
    guard let settings = configuration(given, error: &problem) else {
        return RTCSHARE_E_INVALID_ARGUMENT.rawValue
    }
    let box = CSession(callback: callback, userData: userData)
    do {
        box.agent = try ShareAgent(configuration: settings, processBudget: budget) { [weak box] event in
            box?.deliver(event)
        }
    } catch {
        return error.status
    }
    out.pointee = OpaquePointer(Unmanaged.passRetained(box).toOpaque())
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_start")
public func rtcshare_session_start(_ handle: OpaquePointer?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    guard !s.started.exchange(true, ordering: .acquiringAndReleasing) else { return RTCSHARE_E_STATE.rawValue }
    do { try s.agent.start() } catch {
        s.lastError.withLock { $0 = error.description }
        return error.status
    }
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_push_video")
public func rtcshare_session_push_video(_ handle: OpaquePointer?, _ frame: UnsafePointer<rtcshare_video_frame>?) -> Int32 {
    let formats: [PixelFormat] = [.i420, .nv12, .bgra, .bgrx]
    guard let s = session(handle), let f = frame?.pointee, formats.indices.contains(Int(f.format)),
          let orientation = Orientation(rawValue: Int(f.orientation == 0 ? 1 : f.orientation))
    else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    let format = formats[Int(f.format)]
    let count = format == .i420 ? 3 : format == .nv12 ? 2 : 1
    let pointers = [f.planes.0, f.planes.1, f.planes.2].prefix(count)
    let strides = [f.strides.0, f.strides.1, f.strides.2].prefix(count)
    guard pointers.allSatisfy({ $0 != nil }), strides.allSatisfy({ $0 > 0 }) else {
        return RTCSHARE_E_INVALID_ARGUMENT.rawValue
    }
    let pushed = PushedFrame(format: format, width: Int(f.width), height: Int(f.height),
                             planes: pointers.map { UnsafeRawPointer($0!) }, strides: strides.map { Int($0) },
                             ptsMicroseconds: f.pts_us > 0 ? f.pts_us : nil, orientation: orientation)
    return s.agent.pushVideo(pushed).status
}

@_cdecl("rtcshare_session_push_audio")
public func rtcshare_session_push_audio(_ handle: OpaquePointer?, _ pcm: UnsafeRawPointer?, _ bytes: Int,
                                        _ sampleRate: Int32, _ channels: Int32, _ bigEndian: Int32) -> Int32 {
    guard let s = session(handle), let pcm, bytes > 0 else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    return s.agent.pushAudio(UnsafeRawBufferPointer(start: pcm, count: bytes), sampleRate: Int(sampleRate),
                             channels: Int(channels), bigEndian: bigEndian != 0).status
}

@_cdecl("rtcshare_session_pause")
public func rtcshare_session_pause(_ handle: OpaquePointer?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.agent.pause()
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_resume")
public func rtcshare_session_resume(_ handle: OpaquePointer?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.agent.resume()
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_request_keyframe")
public func rtcshare_session_request_keyframe(_ handle: OpaquePointer?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.agent.requestKeyframe()
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_set_bitrate")
public func rtcshare_session_set_bitrate(_ handle: OpaquePointer?, _ kbps: Int32) -> Int32 {
    guard let s = session(handle), (50...50_000).contains(kbps) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.agent.setBitrate(kbps: Int(kbps))
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_stop")
public func rtcshare_session_stop(_ handle: OpaquePointer?, _ reason: UnsafePointer<CChar>?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.agent.stop(reason: string(reason))
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_wait")
public func rtcshare_session_wait(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<rtcshare_stats>?) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    guard s.started.load(ordering: .acquiring) else { return RTCSHARE_E_STATE.rawValue }
    do {
        let stats = try s.agent.wait()
        let transport = s.agent.transportStats
        s.latest.withLock { $0 = (stats, transport) }
        if let out { s.fill(out, stats, transport) }
        return RTCSHARE_OK.rawValue
    } catch {
        s.lastError.withLock { $0 = error.description }
        if let out { s.latest.withLock { l in s.fill(out, l.0, l.1) } }
        return error.status
    }
}

@_cdecl("rtcshare_session_stats")
public func rtcshare_session_stats(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<rtcshare_stats>?) -> Int32 {
    guard let s = session(handle), let out else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    s.latest.withLock { l in s.fill(out, l.0, l.1) }
    return RTCSHARE_OK.rawValue
}

@_cdecl("rtcshare_session_video_codec")
public func rtcshare_session_video_codec(_ handle: OpaquePointer?) -> Int32 {
    guard let s = session(handle), let agent = s.agent else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    return Int32((agent.videoCodec == .h264 ? RTCSHARE_CODEC_H264 : RTCSHARE_CODEC_VP8).rawValue)
}

/// Copies `text` NUL-terminated into the caller's buffer; its length, or invalid argument.
private func copyOut(_ text: String, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let buffer else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    let bytes = Array(text.utf8)
    guard bytes.count < size, bytes.count < Int32.max else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    bytes.withUnsafeBufferPointer { raw in
        UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress!, byteCount: bytes.count)
    }
    buffer[bytes.count] = 0
    return Int32(bytes.count)
}

@_cdecl("rtcshare_session_sdp")
public func rtcshare_session_sdp(_ handle: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let s = session(handle), let description = s.agent.peerSessionDescription() else {
        return RTCSHARE_E_INVALID_ARGUMENT.rawValue
    }
    return copyOut(description.render(), buffer, size)
}

@_cdecl("rtcshare_session_last_error")
public func rtcshare_session_last_error(_ handle: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let s = session(handle) else { return RTCSHARE_E_INVALID_ARGUMENT.rawValue }
    return copyOut(s.lastError.withLock { $0 }, buffer, size)
}

@_cdecl("rtcshare_session_destroy")
public func rtcshare_session_destroy(_ handle: OpaquePointer?) {
    guard let handle, let s = session(handle) else { return }
    if s.started.load(ordering: .acquiring) {
        s.agent.stop()
        _ = try? s.agent.wait()
    }
    Unmanaged<CSession>.fromOpaque(UnsafeRawPointer(handle)).release()
}
