import CCurlShims

/// A hold on libcurl: loaded (with its dependency chain) while at least one hold exists,
/// unloaded when the last one goes (see CCurlShims). Every libcurl call is made under one.
///
/// Invariants: one `rtcs_curl_release` per successful hold, in `deinit`; holds nest (a request
/// inside an exchange that holds already costs no load).
struct CurlLibrary: ~Copyable {
    init() throws(WHIPError) {
        // A library that cannot be mapped or initialised is a resource failure (out of address
        // space, a missing package), never a server's.
        guard rtcs_curl_hold() == 0 else { throw .resource(String(cString: rtcs_curl_load_error())) }
    }

    deinit { rtcs_curl_release() }

    /// Whether libcurl is mapped in the process now.
    static var isLoaded: Bool { rtcs_curl_is_loaded() != 0 }
}
