// libcurl (Debian libcurl4-openssl-dev, 7.88) for the WHIP HTTP client: the easy interface and
// the URL API (curl_url_*), which resolves a relative Location against the request's URL.
// Headers only: CCurlShims loads the library on first use and Swift calls it through there.
#include <curl/curl.h>
