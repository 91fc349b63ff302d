import RTCShareCore

/// The protocol state of one producer connection (docs/ipc.md), sans-IO: parsed messages go in,
/// with what the socket layer saw beside them (attached file descriptors, the attached file's
/// size); what to do comes out — reply, adopt the shared file, copy a frame, hand over audio,
/// or close with a reason. Every check on producer input that does not need a system call is
/// made here, so it is tested without sockets.
///
/// Invariants: nothing is accepted before HELLO; FRAME only after BUFFERS and only for a frame
/// whose every plane lies inside its buffer, and whose buffer lies inside the file as it was
/// when BUFFERS came; once `close` has been returned, the connection is over.
public struct IPCProducerStateMachine: Sendable {
    /// What rtcshare accepts, announced in WELCOME.
    public struct Limits: Sendable, Equatable {
        /// The largest picture, in either orientation.
        public var maxWidth: Int
        public var maxHeight: Int

        public init(maxWidth: Int, maxHeight: Int) {
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
        }

        /// Whether a `width` x `height` picture fits, as given or turned.
        public func fits(width: Int, height: Int) -> Bool {
            (width <= maxWidth && height <= maxHeight) || (width <= maxHeight && height <= maxWidth)
        }

        public var welcome: IPCWelcome {
            IPCWelcome(maxWidth: UInt32(clamping: maxWidth), maxHeight: UInt32(clamping: maxHeight))
        }
    }

    public enum State: Equatable, Sendable {
        case awaitingHello
        /// HELLO done; no shared file yet (audio may flow).
        case connected
        /// Frames may flow from these buffers.
        case streaming(IPCBuffers)
        case closed
    }

    public enum Action: Equatable, Sendable {
        /// Send this reply.
        case reply(IPCMessage)
        /// Keep the attached file as the shared memory with this table (replacing any before).
        case adoptBuffers(IPCBuffers)
        /// Copy this frame out of the shared file, then send RELEASE of its buffer.
        case copyFrame(IPCFrameLayout)
        /// Hand the samples of this AUDIO message (still in the received bytes) to the audio path.
        case deliverAudio(IPCAudio)
        /// The producer is alive with an unchanged picture.
        case alive
        /// Send `bye` if given, close the connection, and log one line giving `why`.
        case close(bye: IPCBye?, why: String)
    }

    public let limits: Limits
    public private(set) var state = State.awaitingHello
    /// The name the producer gave in HELLO.
    public private(set) var producerName: String?

    public init(limits: Limits) {
        self.limits = limits
    }

    /// A message arrived with `attachedFiles` file descriptors; `fileBytes` is the size of the
    /// first one if it is a regular file (nil otherwise).
    public mutating func received(_ message: IPCMessage, attachedFiles: Int = 0, fileBytes: Int? = nil) -> Action {
        if case .closed = state { return .close(bye: nil, why: "connection already closed") }
        if attachedFiles > 0, message.type != .buffers {
            return malformed("a file descriptor came with \(message.type.name)")
        }
        switch (message, state) {
        case (.hello(let hello), .awaitingHello):
            guard hello.version == IPCProtocol.version else {
                state = .closed
                return .close(bye: IPCBye(reason: .unsupportedVersion,
                                          text: "rtcshare speaks IPC version \(IPCProtocol.version)"),
                              why: "it speaks IPC version \(hello.version); rtcshare speaks \(IPCProtocol.version)")
            }
            producerName = hello.name
            state = .connected
            return .reply(.welcome(limits.welcome))
        case (_, .awaitingHello):
            return malformed("the first message must be HELLO, not \(message.type.name)")
        case (.hello, _):
            return malformed("a second HELLO")

        case (.buffers(let buffers), _):
            if let problem = Self.check(buffers, attachedFiles: attachedFiles, fileBytes: fileBytes) {
                return malformed(problem)
            }
            state = .streaming(buffers)
            return .adoptBuffers(buffers)

        case (.frame(let frame), .streaming(let buffers)):
            switch IPCFrameLayout.validate(frame, buffers: buffers, limits: limits) {
            case .success(let layout):
                return .copyFrame(layout)
            case .failure(.malformed(let why)):
                return malformed(why)
            case .failure(.tooLarge(let why)):
                state = .closed
                return .close(bye: IPCBye(reason: .frameTooLarge, text: "max \(limits.maxWidth)x\(limits.maxHeight)"),
                              why: why)
            }
        case (.frame, _):
            return malformed("FRAME before BUFFERS")

        case (.audio(let audio), _):
            return .deliverAudio(audio)
        case (.unchanged, _):
            return .alive
        case (.bye(let bye), _):
            state = .closed
            let text = bye.text.isEmpty ? "" : ": \(bye.text)"
            return .close(bye: nil, why: "it said BYE (\(bye.reason))\(text)")
        case (.welcome, _), (.release, _):
            return malformed("\(message.type.name) is sent by rtcshare, not by producers")
        }
    }

    /// Bytes that did not parse.
    public mutating func receivedMalformed(_ error: IPCWireError) -> Action {
        malformed(error.description)
    }

    /// Something the socket layer found wrong with the producer's input (a message longer than
    /// any, a shared file that came up short).
    public mutating func receivedMalformed(_ why: String) -> Action {
        malformed(why)
    }

    private mutating func malformed(_ why: String) -> Action {
        state = .closed
        return .close(bye: IPCBye(reason: .malformed, text: why), why: "malformed message: \(why)")
    }

    /// Why a BUFFERS message cannot be used, or nil.
    static func check(_ buffers: IPCBuffers, attachedFiles: Int, fileBytes: Int?) -> String? {
        guard attachedFiles == 1 else {
            return "BUFFERS must carry exactly one file descriptor, not \(attachedFiles)"
        }
        guard let fileBytes else { return "the BUFFERS file descriptor is not a regular file" }
        guard buffers.fileBytes >= 1, buffers.fileBytes <= IPCProtocol.maxSharedBytes else {
            return "BUFFERS file bytes \(buffers.fileBytes) is not in 1...\(IPCProtocol.maxSharedBytes)"
        }
        guard UInt64(fileBytes) >= buffers.fileBytes else {
            return "the shared file is \(fileBytes) bytes, BUFFERS says \(buffers.fileBytes)"
        }
        for (i, e) in buffers.entries.enumerated() {
            guard e.length >= 1, e.offset <= buffers.fileBytes, e.length <= buffers.fileBytes - e.offset else {
                return "buffer \(i) (offset \(e.offset), length \(e.length)) is not inside \(buffers.fileBytes) bytes"
            }
        }
        return nil
    }
}

/// A FRAME checked against its buffer: where each plane's rows are in the shared file.
public struct IPCFrameLayout: Equatable, Sendable {
    /// One plane: `rows` rows of `rowBytes` bytes, `stride` apart, from `fileOffset`.
    public struct Plane: Equatable, Sendable {
        public var fileOffset: Int
        public var stride: Int
        public var rowBytes: Int
        public var rows: Int

        public static let none = Plane(fileOffset: 0, stride: 0, rowBytes: 0, rows: 0)
    }

    public var bufferID: UInt32
    public var format: PixelFormat
    public var orientation: Orientation
    public var width: Int
    public var height: Int
    public var ptsMicroseconds: Int64
    public var plane0: Plane
    public var plane1: Plane
    public var plane2: Plane

    public var planeCount: Int { format.planeCount }

    public func plane(_ index: Int) -> Plane {
        switch index {
        case 0: plane0
        case 1: plane1
        default: plane2
        }
    }

    /// Smallest side accepted (and sides must be even: 4:2:0 chroma).
    public static let minSide = 16
    /// Largest side accepted before the limits are even looked at.
    public static let maxSide = 16_384

    public enum Problem: Error, Equatable {
        /// Not a valid frame at all.
        case malformed(String)
        /// A valid frame bigger than the limits.
        case tooLarge(String)
    }

    /// Row bytes and rows of `plane` of a `width` x `height` picture in `format`.
    public static func geometry(_ format: PixelFormat, plane: Int, width: Int, height: Int) -> (rowBytes: Int, rows: Int) {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        switch (format, plane) {
        case (.i420, 0), (.nv12, 0): return (width, height)
        case (.i420, _): return (cw, ch)
        case (.nv12, _): return (cw * 2, ch)
        case (.bgra, _), (.bgrx, _): return (width * 4, height)
        }
    }

    /// The layout of `frame`, or why it cannot be read.
    public static func validate(_ frame: IPCFrame, buffers: IPCBuffers,
                                limits: IPCProducerStateMachine.Limits) -> Result<IPCFrameLayout, Problem> {
        guard Int(frame.bufferID) < buffers.entries.count else {
            return .failure(.malformed("FRAME names buffer \(frame.bufferID) of \(buffers.entries.count)"))
        }
        let buffer = buffers.entries[Int(frame.bufferID)]
        let w = Int(frame.width), h = Int(frame.height)
        guard w >= minSide, h >= minSide, w <= maxSide, h <= maxSide, w % 2 == 0, h % 2 == 0 else {
            return .failure(.malformed("FRAME size \(w)x\(h) is not even sides in \(minSide)...\(maxSide)"))
        }
        guard limits.fits(width: w, height: h) else {
            return .failure(.tooLarge("its \(w)x\(h) frame is larger than the \(limits.maxWidth)x\(limits.maxHeight) maximum (--ipc-max-size)"))
        }
        var p0 = Plane.none, p1 = Plane.none, p2 = Plane.none  // no array: this runs per frame
        for p in 0..<frame.format.planeCount {
            let (rowBytes, rows) = geometry(frame.format, plane: p, width: w, height: h)
            let stride = Int(frame.strides[p]), offset = Int(frame.offsets[p])
            guard stride >= rowBytes, stride <= IPCProtocol.maxStride else {
                return .failure(.malformed("FRAME plane \(p) stride \(stride) is not in \(rowBytes)...\(IPCProtocol.maxStride)"))
            }
            // All terms are below 2^33, so the sum cannot overflow.
            let end = offset + stride * (rows - 1) + rowBytes
            guard UInt64(end) <= buffer.length else {
                return .failure(.malformed("FRAME plane \(p) ends at \(end), past buffer \(frame.bufferID)'s \(buffer.length) bytes"))
            }
            let plane = Plane(fileOffset: Int(buffer.offset) + offset, stride: stride, rowBytes: rowBytes, rows: rows)
            switch p {
            case 0: p0 = plane
            case 1: p1 = plane
            default: p2 = plane
            }
        }
        return .success(IPCFrameLayout(bufferID: frame.bufferID, format: frame.format, orientation: frame.orientation,
                                       width: w, height: h, ptsMicroseconds: frame.ptsMicroseconds,
                                       plane0: p0, plane1: p1, plane2: p2))
    }
}
