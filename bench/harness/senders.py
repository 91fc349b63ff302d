"""The three senders' command lines for one job, with the VP8 settings matched where each tool
exposes them. `DIFFERENCES` is what the report says about the ones that could not be matched.

Every sender: VP8 (libvpx) realtime, CBR at BITRATE_KBPS, cpu-used -6, one thread, no lag, no
alt-ref, error resilient, static threshold 100, no denoiser, undershoot 100 % / overshoot 15 %,
a 1000 ms rate buffer starting at 500 ms, quantizer 2..56, screen-content mode off (ffmpeg and
GStreamer have no such option), frame dropping below 30 % of the
buffer, keyframes at most 900 % of an average frame and at least every KEYFRAME_SECONDS; RTP
payload type 96 in at most 1200-byte packets; SRTP AES_CM_128_HMAC_SHA1_80 with the same key.

The H.264 rows (same job, payload type 102, FU-A): rtcshare and GStreamer run the same encoder,
openh264 (screen usage, low complexity, bitrate rate control at BITRATE_KBPS, quantizer 12..42,
frame skipping on, one slice, one thread, no scene-change detection, background detection on,
adaptive quantization and denoising off); ffmpeg 5.1 as Debian builds it has no openh264
encoder, so its row is libx264 (ultrafast, zerolatency, constrained baseline, CBR, one thread)."""
import base64

BITRATE_KBPS = 2500
KEYFRAME_SECONDS = 3
MTU = 1200

DIFFERENCES = [
    "keyframe cap: 900 % for all while the rate is the configured one; rtcshare lowers its cap to 300 % "
    "while the network holds the rate below it (never on loopback) and for the first 2 s, before the path "
    "has shown it takes the rate (its first keyframe is capped)",
    "loop filter: rtcshare codes one frame in ten at speed 4 (cpu-used -4) while its quantizer is 20 or "
    "under, so the loop-filter level is searched over the whole frame (libvpx at -6 searches a strip in "
    "the middle, and keeps a coarse keyframe's strong level when that strip is flat); ffmpeg and GStreamer "
    "stay at -6",
    "zero-hertz: after 2 s without a source frame rtcshare encodes one repeat a second (its pacer repeats "
    "the last frame otherwise), and a picture in which no 16x16 macroblock changed for 30 pictures is "
    "not encoded but once a second, whatever the source; in the screen clip's still stretches a frame "
    "identical to the one before may so go unsent, and the viewer's figures count it as shown (the "
    "frame before it is on the screen)",
    "active map: rtcshare gives libvpx a map of the macroblocks that changed within the last 30 fine "
    "pictures (quantizer 4 or under; a keyframe counts as a change everywhere): the others are coded as "
    "skipped without a search; ffmpeg and GStreamer let libvpx look at every macroblock",
    "encoder rate: rtcshare's --bitrate is the rate on the wire, so its encoder is asked for that less "
    "what RTP, SRTP and RTCP add (~3 %), as a sender under a network's estimate must (libwebrtc takes "
    "the packets' overhead off the encoder's allocation too); ffmpeg's and GStreamer's encoders are asked "
    "for the full rate. `--only quality` also runs rtcshare at the rate that matches the references' bytes "
    "on the wire (the table at matched bytes)",
    "token partitions: rtcshare and GStreamer use 4; ffmpeg 5.1 exposes none (libvpx default: 1)",
    "rate buffer optimum: rtcshare and GStreamer 600 ms; ffmpeg derives it (5/6 of the buffer, 833 ms)",
    "keyframes: rtcshare forces one every 3 s (libvpx's own placement off); ffmpeg and GStreamer "
    "give libvpx a 90-frame maximum distance (it may place one sooner)",
    "RTCP: rtcshare sends sender reports muxed on the RTP port and reads the receiver's feedback "
    "(NACK, PLI, receiver reports); ffmpeg sends sender reports to port+1; the GStreamer pipeline "
    "sends none",
    "frame pacing: rtcshare's pacer holds --fps by repeating the last frame when the next is late, "
    "so its receiver can count a few more frames than were fed; ffmpeg and GStreamer send what comes",
    "H.264: ffmpeg's row is a different encoder (libx264 ultrafast/zerolatency: Debian's ffmpeg 5.1 has "
    "no openh264 encoder); rtcshare and GStreamer both run openh264 with matched settings, except "
    "GStreamer's keyframes every 90 frames (its gop-size) where rtcshare forces one every 3 s",
    "screen capture scaling: rtcshare converts and scales each strip as it is read (CCore, "
    "bilinear); ffmpeg uses swscale (bicubic, its default), GStreamer videoconvert + videoscale "
    "(bilinear); ximagesrc uses XDamage (its default)",
]


def key_hex(key_b64):
    return base64.b64decode(key_b64).hex()


VP8_PT, H264_PT = 96, 102


def rtcshare(binary, source, fps, port, key, extra=(), codec="vp8", kbps=BITRATE_KBPS):
    return [binary, "--source", source, "--size", "1280x720", "--fps", str(fps), "--codec", codec,
            "--bitrate", str(kbps), "--keyframe-interval", str(KEYFRAME_SECONDS),
            "--peer", f"127.0.0.1:{port}", "--srtp-key", key, "--mtu", str(MTU), "--quiet", *extra]


def _ffmpeg_vp8(fps, port, key, kbps=BITRATE_KBPS):
    k = kbps
    return ["-an", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "-6", "-threads", "1",
            "-lag-in-frames", "0", "-auto-alt-ref", "0", "-error-resilient", "default",
            "-static-thresh", "100", "-noise-sensitivity", "0",
            "-undershoot-pct", "100", "-overshoot-pct", "15",
            "-b:v", f"{k}k", "-minrate", f"{k}k", "-maxrate", f"{k}k",
            "-bufsize", f"{k}k", "-rc_init_occupancy", f"{k // 2}k",
            "-qmin", "2", "-qmax", "56", "-drop-threshold", "30", "-max-intra-rate", "900",
            "-g", str(KEYFRAME_SECONDS * fps),
            "-payload_type", "96", "-ssrc", "1111",
            "-f", "rtp", "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80", "-srtp_out_params", key,
            f"srtp://127.0.0.1:{port}?pkt_size={MTU}"]


def _ffmpeg_h264(fps, port, key, kbps=BITRATE_KBPS):
    k = kbps
    return ["-an", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-profile:v", "baseline",
            "-threads", "1", "-b:v", f"{k}k", "-maxrate", f"{k}k", "-bufsize", f"{k}k",
            "-g", str(KEYFRAME_SECONDS * fps), "-sc_threshold", "0", "-bf", "0",
            "-payload_type", str(H264_PT), "-ssrc", "1111",
            "-f", "rtp", "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80", "-srtp_out_params", key,
            f"srtp://127.0.0.1:{port}?pkt_size={MTU}"]


def ffmpeg_stdin(fps, port, key, codec="vp8", kbps=BITRATE_KBPS):
    encode = _ffmpeg_h264 if codec == "h264" else _ffmpeg_vp8
    return ["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "yuv4mpegpipe", "-i", "pipe:0",
            *encode(fps, port, key, kbps)]


def ffmpeg_x11(display, screen, fps, port, key):
    return ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin",
            "-f", "x11grab", "-framerate", str(fps), "-video_size", screen, "-draw_mouse", "0",
            "-i", display, "-vf", "scale=1280:720,format=yuv420p", *_ffmpeg_vp8(fps, port, key)]


def _gst_vp8(fps, port, key, kbps=BITRATE_KBPS):
    return (f"vp8enc deadline=1 cpu-used=-6 threads=1 end-usage=cbr target-bitrate={kbps * 1000} "
            "lag-in-frames=0 auto-alt-ref=false error-resilient=default static-threshold=100 "
            "noise-sensitivity=0 undershoot=100 overshoot=15 buffer-size=1000 buffer-initial-size=500 "
            "buffer-optimal-size=600 min-quantizer=2 max-quantizer=56 dropframe-threshold=30 "
            f"token-partitions=4 max-intra-bitrate=900 keyframe-max-dist={KEYFRAME_SECONDS * fps} ! "
            f"rtpvp8pay pt={VP8_PT} ssrc=2222 mtu={MTU} ! " + _gst_srtp_out(port, key))


def _gst_srtp_out(port, key):
    return (f"srtpenc key={key_hex(key)} rtp-cipher=aes-128-icm rtp-auth=hmac-sha1-80 "
            "rtcp-cipher=aes-128-icm rtcp-auth=hmac-sha1-80 ! "
            f"udpsink host=127.0.0.1 port={port} sync=false async=false")


def _gst_h264(fps, port, key, kbps=BITRATE_KBPS):
    return (f"openh264enc usage-type=screen complexity=low rate-control=bitrate bitrate={kbps * 1000} "
            f"max-bitrate={kbps * 1000} qp-min=12 qp-max=42 enable-frame-skip=true "
            "slice-mode=n-slices num-slices=1 multi-thread=1 scene-change-detection=false "
            "background-detection=true adaptive-quantization=false enable-denoise=false "
            f"gop-size={KEYFRAME_SECONDS * fps} ! "
            f"rtph264pay pt={H264_PT} ssrc=2222 mtu={MTU} config-interval=-1 ! " + _gst_srtp_out(port, key))


def gstreamer_stdin(fps, port, key, codec="vp8", kbps=BITRATE_KBPS):
    encode = _gst_h264 if codec == "h264" else _gst_vp8
    return ["gst-launch-1.0", "-q", "-e", *f"fdsrc fd=0 ! y4mdec ! {encode(fps, port, key, kbps)}".split()]


def gstreamer_x11(display, fps, port, key):
    pipeline = (f"ximagesrc display-name={display} show-pointer=false ! video/x-raw,framerate={fps}/1 ! "
                "videoconvert ! videoscale ! video/x-raw,format=I420,width=1280,height=720 ! "
                + _gst_vp8(fps, port, key))
    return ["gst-launch-1.0", "-q", "-e", *pipeline.split()]
