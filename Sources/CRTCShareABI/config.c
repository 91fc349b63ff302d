// The C side of the C ABI: the types live in rtcshare.h (this target's public header, which
// the Swift implementation imports); the defaults are plain C so a caller's debugger sees them.
#include "rtcshare.h"

#include <string.h>

void rtcshare_config_init(rtcshare_config *config) {
    if (!config) return;
    memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->source = "push";
    config->max_width = 1280;
    config->max_height = 720;
    config->fps = 20;
    config->bitrate_kbps = 1500;
    config->audio = RTCSHARE_AUDIO_NONE;
    config->video_codec = RTCSHARE_CODEC_AUTO;
}
