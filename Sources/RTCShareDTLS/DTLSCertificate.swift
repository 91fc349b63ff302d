import CDTLSShims

// The local DTLS identity: an ECDSA P-256 key and a self-signed certificate, made at start-up
// (a few milliseconds; RSA keygen would take tens to hundreds) and announced in the SDP by its
// fingerprint. One certificate may serve any number of transports: each takes its own
// reference inside OpenSSL, so the certificate may be dropped while they run.

/// An owned key + self-signed certificate.
public struct DTLSCertificate: ~Copyable {
    let handle: OpaquePointer

    /// Makes a fresh key and certificate: CN `commonName`, random serial, valid from a day ago
    /// (tolerating peer clock skew) for `validityDays` days.
    public init(commonName: String = "rtcshare", validityDays: Int = 30) throws(DTLSError) {
        guard validityDays > 0, validityDays <= 3650,
              let handle = rtcs_ssl_cert_generate(commonName, Int32(validityDays))
        else { throw .certificateGeneration }
        self.handle = handle
    }

    deinit { rtcs_ssl_cert_free(handle) }

    /// The certificate's fingerprint for `a=fingerprint` (sha-256 unless asked otherwise).
    public func fingerprint(_ hashFunction: DTLSFingerprint.HashFunction = .sha256) -> DTLSFingerprint {
        var digest = [UInt8](repeating: 0, count: hashFunction.digestBytes)
        let n = digest.withUnsafeMutableBufferPointer { out in
            rtcs_ssl_cert_fingerprint(handle, hashFunction.shimHash, out.baseAddress, out.count)
        }
        precondition(n == hashFunction.digestBytes, "X509_digest failed for a certificate we made")
        return try! DTLSFingerprint(hashFunction: hashFunction, digest: digest)
    }
}

extension DTLSFingerprint.HashFunction {
    var shimHash: rtcs_ssl_hash {
        switch self {
        case .sha1: RTCS_SSL_HASH_SHA1
        case .sha256: RTCS_SSL_HASH_SHA256
        case .sha384: RTCS_SSL_HASH_SHA384
        case .sha512: RTCS_SSL_HASH_SHA512
        }
    }
}
