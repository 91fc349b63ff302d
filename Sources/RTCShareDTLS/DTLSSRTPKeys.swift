import RTCShareRTP

// The SRTP master keys a DTLS handshake yields (RFC 5764 §4.2). The exporter output with label
// "EXTRACTOR-dtls_srtp" is, in this order:
//
//     client_write_SRTP_master_key[key_len]
//     server_write_SRTP_master_key[key_len]
//     client_write_SRTP_master_salt[salt_len]
//     server_write_SRTP_master_salt[salt_len]
//
// The client protects what it sends with the client key and salt, the server with the server's;
// each side unprotects with the other's. So a client's `local` equals its server's `remote`.

/// The two master keys of a DTLS-SRTP association, already assigned by role.
public struct DTLSSRTPKeys: Sendable, Equatable, CustomStringConvertible {
    /// For the sender `SRTPContext`: protects what we send.
    public let local: SRTPMasterKey
    /// For the receiver `SRTPContext`: unprotects what the peer sends.
    public let remote: SRTPMasterKey

    public var profile: SRTPProfile { local.profile }

    /// Bytes of exporter output a profile needs: two keys and two salts.
    static func exportedBytes(for profile: SRTPProfile) -> Int { 2 * profile.keyingMaterialBytes }

    /// Splits exporter output for `profile` as RFC 5764 §4.2 lays it out, for our `role`.
    init(exported: [UInt8], profile: SRTPProfile, role: DTLSRole) throws(DTLSError) {
        let k = profile.masterKeyBytes
        let s = profile.masterSaltBytes
        guard exported.count == 2 * (k + s) else { throw .keyExport }
        let clientKey = exported[0..<k], serverKey = exported[k..<2 * k]
        let clientSalt = exported[2 * k..<2 * k + s], serverSalt = exported[2 * k + s..<2 * (k + s)]
        do {
            let client = try SRTPMasterKey(profile: profile, bytes: Array(clientKey + clientSalt))
            let server = try SRTPMasterKey(profile: profile, bytes: Array(serverKey + serverSalt))
            (local, remote) = role == .client ? (client, server) : (server, client)
        } catch {
            throw .keyExport
        }
    }

    public var description: String { "DTLSSRTPKeys(\(profile.name), redacted)" }
}
