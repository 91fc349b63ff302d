#!/usr/bin/python3
"""The GStreamer row of the WHIP case: a WHIP client (RFC 9725) around webrtcbin, publishing
YUV4MPEG2 frames read on standard input as VP8, encoded by vp8enc with the settings of the
end-to-end case's GStreamer sender (senders.py). Run with Debian's own interpreter
(/usr/bin/python3): python3-gi and the GStreamer typelibs are packages for that one.

    /usr/bin/python3 gst_whip_sender.py --whip URL [--fps 30] [--seconds N]
    /usr/bin/python3 gst_whip_sender.py --check   # exit 0 when all it needs is installed

    fdsrc fd=0 ! y4mdec ! vp8enc … ! rtpvp8pay … ! application/x-rtp,… ! webrtcbin (sendonly)

Sends its offer once ICE gathering is complete (no trickle: the test server takes none), with
127.0.0.1 as its only host candidate (UDP), POSTs it as application/sdp, takes the answer of a
201 (its Location is the session), and runs until standard input ends (or --seconds), then
DELETEs the session. Needs gir1.2-gst-plugins-bad-1.0 (GstWebRTC), gir1.2-nice-0.1 (to give the
ICE agent its address) and gstreamer1.0-nice. One line on stderr and exit 1 on any failure."""
import argparse
import base64
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import senders  # noqa: E402

HTTP_TIMEOUT_S = 10
CONNECT_TIMEOUT_S = 15
END_GRACE_MS = 300


def fail(message):
    print(f"gst_whip_sender: {message}", file=sys.stderr, flush=True)
    os._exit(1)  # no teardown: the pipeline may be mid-state


try:
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstSdp", "1.0")
    gi.require_version("GstWebRTC", "1.0")
    gi.require_version("Nice", "0.1")
    from gi.repository import GLib, Gst, GstSdp, GstWebRTC, Nice
except (ImportError, ValueError) as e:
    fail(f"{e} (Debian: python3-gi, gir1.2-gst-plugins-bad-1.0, gir1.2-nice-0.1; run with /usr/bin/python3)")


def vp8_chain(fps):
    """`vp8enc … ! rtpvp8pay …` of the end-to-end case's GStreamer sender, without its SRTP and
    UDP tail (webrtcbin does DTLS-SRTP); the key and port it needs for that tail are unused."""
    unused_key = base64.b64encode(bytes(30)).decode()
    elements = senders._gst_vp8(fps, 0, unused_key).split(" ! ")
    return " ! ".join(e for e in elements if e.startswith(("vp8enc ", "rtpvp8pay ")))


class Sender:
    def __init__(self, url, fps):
        self.url, self.resource, self.code = url, None, 0
        self.loop = GLib.MainLoop()
        caps = f"application/x-rtp,media=video,encoding-name=VP8,payload={senders.VP8_PT},clock-rate=90000"
        try:
            self.pipeline = Gst.parse_launch(f"fdsrc fd=0 ! y4mdec ! {vp8_chain(fps)} ! {caps} ! "
                                             "webrtcbin name=send bundle-policy=max-bundle")
        except GLib.Error as e:
            fail(f"pipeline: {e.message}")
        self.webrtc = self.pipeline.get_by_name("send")
        # Only 127.0.0.1, UDP: libnice would otherwise gather every interface but loopback.
        # Both references stay held to the end: dropping them trips a reference-count assertion.
        self.ice = self.webrtc.get_property("ice-agent")
        self.ice.set_property("ice-tcp", False)
        self.agent = self.ice.get_property("agent")
        address = Nice.Address.new()
        if not (address.set_from_string("127.0.0.1") and self.agent.add_local_address(address)):
            fail("the ICE agent did not take 127.0.0.1")
        transceiver = self.webrtc.emit("get-transceiver", 0)
        if transceiver is None:
            fail("webrtcbin made no transceiver for the video pad")
        transceiver.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
        self.webrtc.connect("on-negotiation-needed", self.on_negotiation_needed)
        self.webrtc.connect("notify::ice-gathering-state", self.on_gathering)
        self.webrtc.connect("notify::connection-state", self.on_connection)
        self.offered = False
        self.connected = False
        # The end of the input: webrtcbin posts no EOS of its own, so its arrival at webrtcbin's
        # pad ends the run (after a moment for the last packets to leave).
        self.webrtc.sinkpads[0].add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, self.on_event)
        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)

    def stop(self, code=0):
        self.code = self.code or code
        self.loop.quit()
        return GLib.SOURCE_REMOVE

    def error(self, message):
        print(f"gst_whip_sender: {message}", file=sys.stderr, flush=True)
        GLib.idle_add(self.stop, 1)

    def on_message(self, _bus, message):
        if message.type == Gst.MessageType.EOS:
            self.stop()
        elif message.type == Gst.MessageType.ERROR:
            err, _ = message.parse_error()
            self.error(f"{message.src.get_name()}: {err.message}")

    def on_event(self, _pad, info):
        if info.get_event().type == Gst.EventType.EOS:
            GLib.timeout_add(END_GRACE_MS, self.stop)
        return Gst.PadProbeReturn.OK

    def on_negotiation_needed(self, webrtc):
        webrtc.emit("create-offer", None, Gst.Promise.new_with_change_func(self.on_offer))

    def on_offer(self, promise):
        reply = promise.get_reply()
        offer = reply.get_value("offer") if reply is not None else None
        if offer is None:
            self.error("webrtcbin made no offer")
            return
        # DTLS client: aiortc as the client offers only ECDSA cipher suites (no aRSA) and the
        # certificate webrtcbin makes for itself is RSA, so webrtcbin as the server (what it is
        # after an actpass offer) meets "no shared cipher". Offered as active, aiortc answers
        # passive and serves its ECDSA certificate.
        ok, sdp = GstSdp.SDPMessage.new_from_text(offer.sdp.as_text().replace("a=setup:actpass", "a=setup:active"))
        if ok != GstSdp.SDPResult.OK:
            self.error("webrtcbin's offer is not SDP")
            return
        offer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.OFFER, sdp)
        self.webrtc.emit("set-local-description", offer, None)

    def on_gathering(self, webrtc, _spec):
        if webrtc.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE \
                and not self.offered:
            self.offered = True
            GLib.idle_add(self.publish)

    def on_connection(self, webrtc, _spec):
        state = webrtc.get_property("connection-state")
        if state == GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
            self.connected = True
        elif state == GstWebRTC.WebRTCPeerConnectionState.FAILED:
            self.error("the peer connection failed (ICE or DTLS)")

    def publish(self):
        offer = self.webrtc.get_property("local-description").sdp.as_text()
        if "a=candidate:" not in offer:
            self.error("ICE gathering ended with no candidate")
            return GLib.SOURCE_REMOVE
        request = urllib.request.Request(self.url, data=offer.encode(), method="POST",
                                         headers={"Content-Type": "application/sdp"})
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
                status, location, body = response.status, response.headers.get("Location"), response.read()
        except urllib.error.HTTPError as e:
            first = e.read().decode(errors="replace").strip().splitlines()[:1]
            self.error(f"POST {self.url}: {e.code}{': ' + first[0] if first else ''}")
            return GLib.SOURCE_REMOVE
        except (urllib.error.URLError, OSError) as e:
            self.error(f"POST {self.url}: {getattr(e, 'reason', e)}")
            return GLib.SOURCE_REMOVE
        if status != 201 or not location:
            self.error(f"POST {self.url}: {status}" + ("" if location else ", no Location"))
            return GLib.SOURCE_REMOVE
        self.resource = urllib.parse.urljoin(self.url, location)
        ok, sdp = GstSdp.SDPMessage.new_from_text(body.decode())
        if ok != GstSdp.SDPResult.OK:
            self.error("the answer is not SDP")
            return GLib.SOURCE_REMOVE
        answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, sdp)
        self.webrtc.emit("set-remote-description", answer, None)
        GLib.timeout_add_seconds(CONNECT_TIMEOUT_S, self.check_connected)
        return GLib.SOURCE_REMOVE

    def check_connected(self):
        if not self.connected:
            self.error(f"not connected {CONNECT_TIMEOUT_S} s after the answer (ICE or DTLS)")
        return GLib.SOURCE_REMOVE

    def delete(self):
        if self.resource is None:
            return
        try:
            urllib.request.urlopen(urllib.request.Request(self.resource, method="DELETE"),
                                   timeout=HTTP_TIMEOUT_S).close()
        except (urllib.error.URLError, OSError) as e:
            print(f"gst_whip_sender: DELETE {self.resource}: {getattr(e, 'reason', e)}", file=sys.stderr)

    def run(self, seconds):
        if seconds:
            GLib.timeout_add(int(seconds * 1000), self.stop)
        for sig in (2, 15):  # SIGINT, SIGTERM: stop as at the end of the input
            GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, self.stop)
        if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            fail("the pipeline did not start")
        self.loop.run()
        if self.code == 0 and self.resource is None:
            print("gst_whip_sender: the input ended before the session was set up", file=sys.stderr)
            self.code = 1
        self.delete()
        self.pipeline.set_state(Gst.State.NULL)
        return self.code


def main():
    parser = argparse.ArgumentParser(description="Publish YUV4MPEG2 on stdin over WHIP with GStreamer webrtcbin.")
    parser.add_argument("--whip", help="the WHIP endpoint, http://127.0.0.1:PORT/…")
    parser.add_argument("--check", action="store_true", help="only check that everything needed is there")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--seconds", type=float, help="stop after this long (default: at the end of stdin)")
    args = parser.parse_args()
    if not (args.whip or args.check):
        parser.error("--whip is required")
    host = urllib.parse.urlsplit(args.whip or "http://127.0.0.1/").hostname or ""
    if not host.startswith("127."):
        fail(f"{args.whip}: only a numeric loopback address (127.x.x.x)")
    Gst.init(None)
    for element in ("fdsrc", "y4mdec", "vp8enc", "rtpvp8pay", "webrtcbin", "nicesrc", "nicesink", "dtlssrtpenc"):
        if Gst.ElementFactory.find(element) is None:
            fail(f"GStreamer has no {element} (Debian: gstreamer1.0-plugins-good, -bad, gstreamer1.0-nice)")
    if args.check:
        return
    code = Sender(args.whip, args.fps).run(args.seconds)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skips the bindings' teardown, which trips over webrtcbin's ICE agent reference


if __name__ == "__main__":
    main()
