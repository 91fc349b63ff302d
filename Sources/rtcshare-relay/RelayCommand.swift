import ArgumentParser
import Glibc
import RTCShareCore
import RTCShareImpairment
import RTCShareIO

/// `rtcshare-relay`: a UDP relay on this host that impairs what crosses it, both ways, seeded and
/// repeatable — loss (random and bursty), delay, jitter, reordering, duplication, a bandwidth
/// cap with a bounded queue. The model is `ImpairedPath` (sans-IO); this is its socket edge.
@main
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtcshare-relay",
        abstract: "Relay UDP between a sender and a receiver on loopback, impairing both directions.",
        discussion: """
            The sender sends to --listen; the relay sends that on to --forward from a port of its own, \
            and what the receiver sends back to that port goes back to the sender. Give --listen and \
            --forward several times for several streams (video, audio), paired in order. Impairment \
            options without a prefix act towards the receiver; the same with --back- towards the sender. \
            On SIGINT, SIGTERM or after --duration it prints one JSON line of statistics per direction \
            ("to-receiver", "to-sender") on stdout. Only numeric addresses of this host are accepted: \
            127.0.0.0/8, or one assigned to an interface here (inside a network namespace, its own).
            """)

    @Option(name: .customLong("listen"), help: ArgumentHelp("Where the sender sends (repeatable).", valueName: "127.0.0.1:port"))
    var listen: [String] = []

    @Option(name: .customLong("forward"), help: ArgumentHelp("Where the receiver listens (repeatable, paired with --listen).", valueName: "127.0.0.1:port"))
    var forward: [String] = []

    @Option(help: "Seed of the random draws (the same seed and traffic give the same fates).")
    var seed: UInt64 = 1

    @Option(help: "Stop after this many seconds (default: until SIGINT/SIGTERM).")
    var duration: Double?

    @Option(help: ArgumentHelp("Also report each direction's figures for what came this many seconds after its first datagram (\"settled\": a sender's convergence left out).", valueName: "seconds"))
    var settle: Double?

    @Option(help: ArgumentHelp("Random loss towards the receiver, percent.", valueName: "percent"))
    var loss = 0.0
    @Option(name: .customLong("burst-loss"), help: ArgumentHelp("Bursty (Gilbert-Elliott) loss towards the receiver, long-run percent.", valueName: "percent"))
    var burstLoss = 0.0
    @Option(name: .customLong("burst-length"), help: ArgumentHelp("Mean burst length of --burst-loss, datagrams.", valueName: "n"))
    var burstLength = 1.0
    @Option(help: ArgumentHelp("One-way delay towards the receiver.", valueName: "ms"))
    var delay = 0.0
    @Option(help: ArgumentHelp("Delay varies within delay ± jitter towards the receiver (order kept).", valueName: "ms"))
    var jitter = 0.0
    @Option(help: ArgumentHelp("Datagrams held back 10 ms so later ones overtake them, towards the receiver.", valueName: "percent"))
    var reorder = 0.0
    @Option(help: ArgumentHelp("Datagrams delivered twice towards the receiver.", valueName: "percent"))
    var duplicate = 0.0
    @Option(help: ArgumentHelp("Bandwidth cap towards the receiver (default: none).", valueName: "kbit/s"))
    var rate: Int?
    @Option(help: ArgumentHelp("Queue of the bandwidth cap towards the receiver; more is tail-dropped.", valueName: "bytes"))
    var queue = 64 << 10

    @Option(name: .customLong("back-loss"), help: ArgumentHelp("Random loss towards the sender, percent.", valueName: "percent"))
    var backLoss = 0.0
    @Option(name: .customLong("back-burst-loss"), help: ArgumentHelp("Bursty loss towards the sender, long-run percent.", valueName: "percent"))
    var backBurstLoss = 0.0
    @Option(name: .customLong("back-burst-length"), help: ArgumentHelp("Mean burst length of --back-burst-loss, datagrams.", valueName: "n"))
    var backBurstLength = 1.0
    @Option(name: .customLong("back-delay"), help: ArgumentHelp("One-way delay towards the sender.", valueName: "ms"))
    var backDelay = 0.0
    @Option(name: .customLong("back-jitter"), help: ArgumentHelp("Delay varies within delay ± jitter towards the sender.", valueName: "ms"))
    var backJitter = 0.0
    @Option(name: .customLong("back-reorder"), help: ArgumentHelp("Datagrams held back 10 ms towards the sender.", valueName: "percent"))
    var backReorder = 0.0
    @Option(name: .customLong("back-duplicate"), help: ArgumentHelp("Datagrams delivered twice towards the sender.", valueName: "percent"))
    var backDuplicate = 0.0
    @Option(name: .customLong("back-rate"), help: ArgumentHelp("Bandwidth cap towards the sender (default: none).", valueName: "kbit/s"))
    var backRate: Int?
    @Option(name: .customLong("back-queue"), help: ArgumentHelp("Queue of the cap towards the sender.", valueName: "bytes"))
    var backQueue = 64 << 10

    static func profile(loss: Double, burstLoss: Double, burstLength: Double, delay: Double, jitter: Double,
                        reorder: Double, duplicate: Double, rate: Int?, queue: Int) throws(ImpairmentError) -> ImpairmentProfile {
        guard delay.isFinite, jitter.isFinite, delay >= 0, jitter >= 0, delay <= 3_600_000, jitter <= 3_600_000 else {
            throw ImpairmentError("delay and jitter must be 0...3600000 ms")
        }
        if let rate, rate <= 0 || rate > 100_000_000 { throw ImpairmentError("the rate must be 1...100000000 kbit/s") }
        var p = ImpairmentProfile()
        p.lossPercent = loss
        p.burstLossPercent = burstLoss
        p.meanBurstLength = burstLength
        p.delay = .microseconds(Int64(delay * 1000))
        p.jitter = .microseconds(Int64(jitter * 1000))
        p.reorderPercent = reorder
        p.duplicatePercent = duplicate
        p.rateBitsPerSecond = rate.map { $0 * 1000 }
        p.queueBytes = queue
        return try p.validated()
    }

    /// A numeric IPv4 address of this host — loopback, or assigned to one of its interfaces (in a
    /// network namespace, the namespace's) — or one line saying why not. Nothing the relay sends
    /// can leave the host.
    static func loopback(_ text: String, option: String) throws(ImpairmentError) -> SocketAddress {
        let refused = ImpairmentError("--\(option) \(text): only numeric addresses of this host are accepted "
                                      + "(127.0.0.0/8 or one assigned to an interface here)")
        // Checked before parsing, so a name is never looked up.
        let host = text.split(separator: ":", maxSplits: 1).first ?? ""
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else { throw refused }
        let address: SocketAddress
        do { address = try SocketAddress(parsing: text) } catch {
            throw ImpairmentError("--\(option) \(text): \(error)")
        }
        let here = SocketAddress.interfaceAddresses(port: 0).compactMap(\.ipv4)
        guard let v4 = address.ipv4, v4 >> 24 == 127 || here.contains(v4) else { throw refused }
        return address
    }

    func run() throws {
        let toReceiver: ImpairmentProfile, toSender: ImpairmentProfile
        var pairs: [(listen: SocketAddress, forward: SocketAddress)] = []
        do throws(ImpairmentError) {
            guard !listen.isEmpty, listen.count == forward.count else {
                throw ImpairmentError("give --listen and --forward, as many of one as of the other")
            }
            for (l, f) in zip(listen, forward) {
                pairs.append((try Self.loopback(l, option: "listen"), try Self.loopback(f, option: "forward")))
            }
            if let duration, !(duration > 0 && duration <= 366 * 86_400) {
                throw ImpairmentError("--duration must be a positive number of seconds")
            }
            if let settle, !(settle >= 0 && settle <= 86_400) {
                throw ImpairmentError("--settle must be 0...86400 seconds")
            }
            toReceiver = try Self.profile(loss: loss, burstLoss: burstLoss, burstLength: burstLength, delay: delay,
                                          jitter: jitter, reorder: reorder, duplicate: duplicate, rate: rate, queue: queue)
            toSender = try Self.profile(loss: backLoss, burstLoss: backBurstLoss, burstLength: backBurstLength,
                                        delay: backDelay, jitter: backJitter, reorder: backReorder,
                                        duplicate: backDuplicate, rate: backRate, queue: backQueue)
        } catch {
            Self.fail(error.description)
        }
        let relay: Relay
        do {
            relay = try Relay(pairs: pairs, toReceiver: toReceiver, toSender: toSender, seed: seed,
                              settleAfter: settle.map { .microseconds(Int64($0 * 1_000_000)) })
        } catch {
            Self.fail("\(error)")
        }
        let signals = SignalWatcher { relay.stop() }
        defer { _ = signals }
        Self.write("rtcshare-relay: relaying " + pairs.map { "\($0.listen) -> \($0.forward)" }.joined(separator: ", "),
                   to: STDERR_FILENO)
        let (forward, back) = relay.run(durationMicroseconds: duration.map { Int64($0 * 1_000_000) })
        for (figures, direction) in [(forward, "to-receiver"), (back, "to-sender")] {
            let settled = settle == nil ? nil : figures.settled ?? ImpairmentStatistics()
            Self.write(figures.whole.json(direction: direction, settled: settled, settledAfterSeconds: settle ?? 0),
                       to: STDOUT_FILENO)
        }
    }

    static func fail(_ message: String) -> Never {
        write("rtcshare-relay: \(message)", to: STDERR_FILENO)
        Glibc.exit(2)
    }

    /// One line, unbuffered (the statistics must be out before the process ends).
    static func write(_ line: String, to descriptor: Int32) {
        let text = line + "\n"
        _ = text.withCString { Glibc.write(descriptor, $0, strlen($0)) }
    }
}
