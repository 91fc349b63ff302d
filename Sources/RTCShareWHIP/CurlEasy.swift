import CCurl
import CCurlShims
import Glibc

/// A libcurl easy handle performing one `HTTPRequest`, blocking the calling thread.
///
/// Why blocking: WHIP is four requests per share (POST, maybe PATCH, DELETE), made at the IO
/// edge, never on the media thread; a multi handle would add a second event loop for nothing.
///
/// Invariants: a handle is owned (`~Copyable`) and cleaned up in `deinit`; libcurl writes the
/// response into a bounded capture (`rtcs_curl_response`) whose buffers are one malloc per
/// request (checked: no trap when memory runs out), freed before `perform` returns; nothing libcurl keeps points into Swift memory
/// after `perform` (strings passed to setopt are copied by libcurl, the body with
/// CURLOPT_COPYPOSTFIELDS). Only http and https are allowed, for the request and redirects.
/// This file is the one place a `CURLcode` becomes a `WHIPError`. A request with a `WHIPStop`
/// runs on a multi handle whose poll also waits on the stop (`rtcs_curl_perform`).
struct CurlEasy: ~Copyable {
    /// Largest response header block read (bytes).
    static let maximumHeaderBytes = 16 << 10

    private let handle: UnsafeMutableRawPointer
    /// libcurl stays loaded while the handle lives.
    private let library: CurlLibrary

    init() throws(WHIPError) {
        let library = try CurlLibrary()
        guard let h = rtcs_curl_easy_init() else { throw .resource("libcurl could not make a handle") }
        handle = h
        self.library = library
    }

    deinit { rtcs_curl_easy_cleanup(handle) }

    /// Performs `request` and returns the final response, whatever its status.
    func perform(_ request: HTTPRequest) throws(WHIPError) -> HTTPResponse {
        // The handle, not `self`, from here on: Swift 6.0's move-only checker crashes on this
        // function when the noncopyable `self` is borrowed across its many throwing calls.
        let handle = self.handle
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        for line in request.headers { headerList = rtcs_curl_slist_append(headerList, line) }
        defer { rtcs_curl_slist_free_all(headerList) }

        // One block for the error text, the capture and its two buffers, from malloc: Swift's
        // allocate traps when memory runs out, and a request made with the address space nearly
        // spent (libcurl's chain has just been mapped) must fail as an error, not a trap.
        let captureBytes = (MemoryLayout<rtcs_curl_response>.size + 15) & ~15
        let total = captureBytes + Int(CURL_ERROR_SIZE) + Self.maximumHeaderBytes + max(1, request.maximumBodyBytes)
        guard let block = calloc(1, total) else {
            throw .resource("out of memory for a \(total >> 10) KiB HTTP response buffer")
        }
        defer { free(block) }
        let capture = block.bindMemory(to: rtcs_curl_response.self, capacity: 1)
        let errorText = (block + captureBytes).bindMemory(to: CChar.self, capacity: Int(CURL_ERROR_SIZE))
        let headerBuffer = errorText + Int(CURL_ERROR_SIZE)
        let bodyBuffer = headerBuffer + Self.maximumHeaderBytes
        capture.initialize(to: rtcs_curl_response(
            headers: headerBuffer, header_capacity: Self.maximumHeaderBytes, header_length: 0,
            body: bodyBuffer, body_capacity: request.maximumBodyBytes, body_length: 0,
            overflow: RTCS_CURL_OVERFLOW_NONE))

        try Self.check(rtcs_curl_capture(handle, capture))
        try Self.set(handle, CURLOPT_URL, request.url)
        try Self.set(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        try Self.set(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try Self.set(handle, CURLOPT_NOSIGNAL, 1)  // no SIGALRM: other threads run beside this one
        try Self.set(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(request.connectTimeout * 1000))
        try Self.set(handle, CURLOPT_TIMEOUT_MS, Int(request.totalTimeout * 1000))
        try Self.set(handle, CURLOPT_FOLLOWLOCATION, request.maximumRedirects > 0 ? 1 : 0)
        try Self.set(handle, CURLOPT_MAXREDIRS, request.maximumRedirects)
        // 307/308 keep the method and body by definition; keep them on 301/302 too (servers
        // that mean "go there" send those), while 303 turns into a GET as RFC 9110 says.
        try Self.set(handle, CURLOPT_POSTREDIR, Int(CURL_REDIR_POST_301 | CURL_REDIR_POST_302))
        try Self.set(handle, CURLOPT_USERAGENT, "rtcshare")
        try Self.check(rtcs_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList))
        try Self.check(rtcs_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText))
        if let body = request.body {
            try Self.set(handle, CURLOPT_POSTFIELDSIZE, body.utf8.count)
            try Self.set(handle, CURLOPT_COPYPOSTFIELDS, body)  // sets POST; libcurl keeps its own copy
        }
        if request.method != (request.body == nil ? "GET" : "POST") {
            try Self.set(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }

        let rc = rtcs_curl_perform(handle, request.stop?.watchedDescriptor ?? -1)
        if rc != CURLE_OK {
            if rc == CURLE_ABORTED_BY_CALLBACK { throw .stopped }
            let r = capture.pointee
            if rc == CURLE_WRITE_ERROR, r.overflow == RTCS_CURL_OVERFLOW_BODY {
                throw .responseTooLarge(what: "body", limit: request.maximumBodyBytes)
            }
            if rc == CURLE_WRITE_ERROR, r.overflow == RTCS_CURL_OVERFLOW_HEADERS {
                throw .responseTooLarge(what: "header block", limit: Self.maximumHeaderBytes)
            }
            if rc == CURLE_OPERATION_TIMEDOUT {
                var elapsed = 0.0
                _ = rtcs_curl_getinfo_double(handle, CURLINFO_TOTAL_TIME, &elapsed)
                throw .timeout(seconds: elapsed)
            }
            let detail = errorText.pointee != 0 ? String(cString: errorText) : String(cString: rtcs_curl_easy_strerror(rc))
            let line = WHIPText.sanitised(Array(detail.utf8), hiding: request.secrets)
            switch rc {
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
                throw .badURL(WHIPText.sanitised(Array(request.url.utf8), hiding: request.secrets))
            case CURLE_TOO_MANY_REDIRECTS:
                throw .tooManyRedirects(request.maximumRedirects)
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
                throw .untrustedServer(line)
            case CURLE_OUT_OF_MEMORY, CURLE_FAILED_INIT, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ENGINE_NOTFOUND:
                throw .resource(line)
            default:
                throw .transport(line)
            }
        }

        var status = 0
        try Self.check(rtcs_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status))
        var effective: UnsafePointer<CChar>? = nil
        try Self.check(rtcs_curl_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective))
        let r = capture.pointee
        return HTTPResponse(
            status: status,
            headers: HTTPHeaders(raw: UnsafeRawBufferPointer(start: r.headers, count: r.header_length)),
            body: Array(UnsafeRawBufferPointer(start: r.body, count: r.body_length)),
            effectiveURL: effective.map { String(cString: $0) } ?? request.url)
    }

    private static func set(_ handle: UnsafeMutableRawPointer, _ option: CURLoption, _ value: Int) throws(WHIPError) {
        try check(rtcs_curl_setopt_long(handle, option, value))
    }

    private static func set(_ handle: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String) throws(WHIPError) {
        try check(rtcs_curl_setopt_string(handle, option, value))
    }

    private static func check(_ rc: CURLcode) throws(WHIPError) {
        guard rc == CURLE_OK else {
            let line = "libcurl: \(String(cString: rtcs_curl_easy_strerror(rc)))"
            throw rc == CURLE_OUT_OF_MEMORY ? .resource(line) : .transport(line)
        }
    }
}
