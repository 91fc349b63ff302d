import RTCShareICE
import RTCShareWHIP

extension WebRTCOfferConfiguration.Candidate {
    /// The offer's form of one of the ICE agent's local candidates: host, server-reflexive and
    /// relayed ones (what an offer written before the checks can hold); nil for peer-reflexive.
    public init?(_ candidate: ICECandidate) {
        switch candidate.type {
        case .host:
            self.init(address: candidate.address.host, port: Int(candidate.address.port), priority: candidate.priority,
                      foundation: candidate.foundation)
        case .serverReflexive:
            guard let base = candidate.relatedAddress else { return nil }
            self.init(serverReflexive: candidate.address.host, port: Int(candidate.address.port),
                      priority: candidate.priority, foundation: candidate.foundation,
                      relatedAddress: base.host, relatedPort: Int(base.port))
        case .relayed:
            let related = candidate.relatedAddress ?? candidate.address
            self.init(relayed: candidate.address.host, port: Int(candidate.address.port), priority: candidate.priority,
                      foundation: candidate.foundation, relatedAddress: related.host, relatedPort: Int(related.port))
        case .peerReflexive:
            return nil
        }
    }
}
