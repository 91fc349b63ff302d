/*
 * Publishes one share into a WebRTC server over WHIP through the C ABI: the test pattern and a
 * tone, at 1280x720 and 20 fps, for a number of seconds.
 *
 *   whip_publish URL SECONDS [BIND_HOST:PORT [CODEC [STUN_HOST:PORT [RECONNECT]]]]
 *
 * CODEC is vp8, h264 or auto (the default: both offered, the server picks). STUN_HOST:PORT is a
 * STUN server asked for the public address before the offer (behind NAT; "" for none).
 * RECONNECT is whip_reconnect: 0 (the default) publishes again for ever after a lost connection,
 * N > 0 at most N attempts in a row, -1 never.
 * Prints the events and one summary line; exits 0 when the share ran to its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtcshare.h"

static void on_event(void *user, const rtcshare_event *event) {
    (void)user;
    if (event->type == RTCSHARE_EVENT_PROGRESS) return;
    printf("event %d%s%s\n", event->type, event->text ? ": " : "", event->text ? event->text : "");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr,
                "usage: %s URL SECONDS [BIND_HOST:PORT [vp8|h264|auto [STUN_HOST:PORT [RECONNECT\n"
                "       [ICE_SERVERS USERNAME CREDENTIAL [all|relay]]]]]]\n",
                argv[0]);
        return 2;
    }
    rtcshare_process *process = rtcshare_process_create(64ull << 20);
    rtcshare_config c;
    rtcshare_config_init(&c);
    c.source = "testsrc";
    c.width = 1280;
    c.height = 720;
    c.audio = RTCSHARE_AUDIO_TESTTONE;
    c.whip_url = argv[1];
    c.whip_bind = argc > 3 ? argv[3] : NULL;
    c.whip_stun = argc > 5 && argv[5][0] ? argv[5] : NULL;
    c.whip_reconnect = argc > 6 ? atoi(argv[6]) : 0;
    c.duration_seconds = atof(argv[2]);
    if (argc > 9) {
        c.whip_ice_servers = argv[7];
        c.whip_ice_username = argv[8];
        c.whip_ice_credential = argv[9];
        c.whip_ice_transport_policy = argc > 10 && strcmp(argv[10], "relay") == 0 ? 1 : 0;
    }
    if (argc > 4) {
        c.video_codec = strcmp(argv[4], "h264") == 0  ? RTCSHARE_CODEC_H264
                        : strcmp(argv[4], "vp8") == 0 ? RTCSHARE_CODEC_VP8
                                                      : RTCSHARE_CODEC_AUTO;
    }
    rtcshare_session *session = NULL;
    int32_t status = rtcshare_session_create(process, &c, on_event, NULL, &session);
    if (status != RTCSHARE_OK) {
        fprintf(stderr, "whip_publish: %s (%s)\n", rtcshare_error_message(status),
                rtcshare_status_is_temporary(status) ? "temporary: try again later" : "permanent");
        rtcshare_process_destroy(process);
        return 1;
    }
    rtcshare_stats stats = {0};
    printf("codec %s\n", rtcshare_session_video_codec(session) == RTCSHARE_CODEC_H264 ? "h264" : "vp8");
    status = rtcshare_session_start(session);
    if (status == RTCSHARE_OK) status = rtcshare_session_wait(session, &stats);
    char detail[256];
    rtcshare_session_last_error(session, detail, sizeof detail);
    printf("%s%s%s%s; encoded %lld frames, sent %lld packets\n", rtcshare_error_message(status), detail[0] ? ": " : "",
           detail, rtcshare_status_is_temporary(status) ? " (temporary: try again later)" : "",
           (long long)stats.encoded_frames, (long long)stats.packets_sent);
    rtcshare_session_destroy(session);
    rtcshare_process_destroy(process);
    return status == RTCSHARE_OK ? 0 : 1;
}
