import CCore

/// Lets go of the code and read-only data pages only a share's start touched: argument parsing,
/// library initialisers, the HTTP exchange that published it, the DTLS handshake (at 1280x720
/// over WHIP the binary's resident pages go from 6.4 to ~5 MiB, libcrypto and libssl's from 4.6
/// to ~1.6, NSS's from 2.8 to ~1). Every loaded object's read-only segments are dropped
/// (`ccore_release_code_pages`); what the share runs again returns from the page cache on its
/// next touch (minor faults, a few hundred once), the rest stays out. The bytes read the same
/// whichever way: only pages no one can have written are dropped.
public enum StartupCodePages {
    /// Drops them; returns the bytes of the ranges advised (not how much was resident).
    @discardableResult
    public static func release() -> Int {
        var advised = 0
        return ccore_release_code_pages(&advised) == CCORE_OK ? advised : 0
    }
}
