import CCurl
import CCurlShims

/// URL reference resolution (RFC 3986 §5) with libcurl's URL API, for the `Location` of a WHIP
/// resource, which may be relative to the URL that answered (RFC 9725 §4.2).
///
/// Why libcurl's: it is the parser the requests themselves go through, so a URL resolved here
/// is one the next request will read the same way.
enum CurlURL {
    /// `reference` resolved against the absolute `base`; only http(s) results are accepted.
    static func resolve(_ reference: String, against base: String) throws(WHIPError) -> String {
        let library = try CurlLibrary()
        defer { _ = library }
        guard let url = rtcs_curl_url() else { throw .resource("libcurl could not make a URL handle") }
        defer { rtcs_curl_url_cleanup(url) }
        let bad = WHIPError.badURL(WHIPText.sanitised(Array(reference.utf8)))
        guard rtcs_curl_url_set(url, CURLUPART_URL, base, 0) == CURLUE_OK else { throw bad }
        // With a URL already set, a relative one is resolved against it.
        guard rtcs_curl_url_set(url, CURLUPART_URL, reference, 0) == CURLUE_OK else { throw bad }
        let scheme = part(url, CURLUPART_SCHEME)?.lowercased()
        guard scheme == "http" || scheme == "https", let full = part(url, CURLUPART_URL) else { throw bad }
        return full
    }

    private static func part(_ url: OpaquePointer, _ which: CURLUPart) -> String? {
        var out: UnsafeMutablePointer<CChar>? = nil
        guard rtcs_curl_url_get(url, which, &out, 0) == CURLUE_OK, let out else { return nil }
        defer { rtcs_curl_free(out) }
        return String(cString: out)
    }
}
