// libogg's page framing (lacing, page CRC), for the Ogg Opus file writer (RFC 3533, 7845).
#include <ogg/ogg.h>
