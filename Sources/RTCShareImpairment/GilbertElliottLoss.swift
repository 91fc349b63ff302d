/// Bursty loss as a two-state Markov chain (Gilbert-Elliott, in the simple form every datagram
/// in the bad state is lost and none in the good): from good the chain goes bad with
/// probability p, from bad back to good with r, once per datagram. The mean burst is 1/r and
/// the long-run loss p / (p + r), so p follows from the loss and burst asked for.
public struct GilbertElliottLoss: Sendable, Equatable {
    /// Per-datagram transition probabilities.
    public let goodToBad: Double
    public let badToGood: Double
    public private(set) var isBad = false

    /// `lossFraction` in 0..<1, `meanBurstLength` ≥ 1 datagrams.
    public init(lossFraction: Double, meanBurstLength: Double) {
        let r = 1 / max(1, meanBurstLength)
        let loss = min(max(0, lossFraction), 0.999_999)
        badToGood = r
        goodToBad = min(1, loss * r / (1 - loss))
    }

    /// Steps the chain for one datagram with a uniform draw in 0..<1; true: it is lost.
    public mutating func step(draw: Double) -> Bool {
        isBad = isBad ? draw >= badToGood : draw < goodToBad
        return isBad
    }
}
