// libcurl (Debian libcurl4-openssl-dev, 7.88) for the WHIP HTTP client: the easy interface and
// the URL API (curl_url_*), which resolves a relative Location against the request's URL.
// curl_easy_setopt/getinfo are variadic: Swift calls them through CCurlShims.
#include <curl/curl.h>
