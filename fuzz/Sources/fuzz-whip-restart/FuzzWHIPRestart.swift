// WHIPICERestart.parse: the SDP fragment a WHIP server answers an ICE restart PATCH with —
// untrusted bytes from the network — read for its new ICE credentials and candidates.
//
// Oracles, on an accepted fragment: ufrag and password of ICE's lengths (4–256, 22–256) and
// character set, at most 32 candidates, each as it came after "a="; the entity tag handed in
// comes back. A refused fragment gives an error whose description is one non-empty line.

import FuzzSupport
import RTCShareWHIP

@main
enum FuzzWHIPRestart {
    static func main() { runLibFuzzer(fuzzWHIPRestart) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHIPRestart(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(fuzzBytes(data, size))
    let restart: WHIPICERestart
    do {
        restart = try WHIPICERestart.parse(bytes, entityTag: "\"e1\"")
    } catch {
        fuzzCheck(!error.description.isEmpty && !error.description.contains("\n"), "error is not one line")
        return 0
    }
    func iceChars(_ s: String) -> Bool {
        s.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0)
            || $0 == 0x2B || $0 == 0x2F }
    }
    fuzzCheck((4...256).contains(restart.ufrag.utf8.count) && iceChars(restart.ufrag), "ufrag \(restart.ufrag)")
    fuzzCheck((22...256).contains(restart.password.utf8.count) && iceChars(restart.password), "password")
    fuzzCheck(restart.candidates.count <= 32, "\(restart.candidates.count) candidates")
    fuzzCheck(restart.candidates.allSatisfy { $0.hasPrefix("candidate:") }, "candidate without its name")
    fuzzCheck(restart.entityTag == "\"e1\"", "entity tag")
    return 0
}
