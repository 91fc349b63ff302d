#!/usr/bin/env python3
"""A WHIP server (RFC 9725) around aiortc, for rtcshare's tests; loopback, or an address inside a
network namespace the test made.

    python3 whip_server.py --port-file P --summary S.json [--port N] [--host A]

Listens on --host (127.0.0.1 by default; port 0 = any; the chosen port is written to
--port-file once it listens), offers that address as aiortc's only ICE host candidate, and on
SIGTERM/SIGINT writes a JSON summary to --summary and exits. Files are written whole: to a
temporary name, then renamed, so a reader never sees half of one.

Real endpoint (aiortc decodes what it receives):
  POST   /whip/<id>               201, relative Location /whip/resource/<id>, the SDP answer (a
                                  later POST to the same <id>, a reconnect, gets a resource of
                                  its own, /whip/resource/<id>~<n> for its n-th POST)
  PATCH  /whip/resource/<id>      405 (aiortc does not take trickled candidates)
  DELETE /whip/resource/<id>      200; counted in the summary (the <id> under "deletes", the whole
                                  resource name under "deleted_resources"; an unknown one is
                                  counted too, 200). The session is closed and, once
                                  every frame it received has been decoded and counted (on a
                                  busy machine aiortc's decoding lags), its id is listed under
                                  "finished" (under "unfinished" if that took over 300 s)
Fixed replies for the HTTP client's error paths (no aiortc involved):
  POST /status/<code>             <code> with a two-line text body (first line names the code)
  POST /echo-auth                 401 whose body echoes the Authorization header
  POST /no-location               201 with an SDP body and no Location
  POST /absolute/<id>             201, absolute Location http://127.0.0.1:<port>/whip/resource/<id>
  POST /lowercase/<id>            201, header written as "location:" (lowercase)
  POST /echo                      201, body = the request body; Link headers with a STUN and a
                                  TURN server; headers X-Method and X-Auth-Seen (yes/no)
  POST /redirect/<code>/<rest>    <code> (307/308) to /<rest>
  POST /hang                      never answers
  DELETE /hang                    never answers (a DELETE that gets no answer)
  DELETE /status/<code>           <code> with the same body as POST /status/<code>
  POST /retry-after/<code>/<n>    <code> with "Retry-After: <n>" (delta-seconds)
  POST /retry-after-date/<code>/<n>  <code> with Retry-After as an HTTP-date <n> s after its Date
  POST /answer-200/<id>           200 (not 201) with an SDP body and a Location
  POST /answer-html/<id>          201 with a Location, but text/html
  POST /answer-truncated/<id>     201 application/sdp, Location, an SDP cut off in its m= line
  POST /whip-no-codec/<id>        the real endpoint, its answer's video codecs renamed (no
                                  common codec: rtcshare must refuse it)
  POST /whip-video-rejected/<id>  the real endpoint, its answer's video section at port 0
  POST /big                       201 with a 100 KiB body
  POST /whip-bad-fingerprint/<id> the real endpoint, its answer's fingerprints altered (DTLS must refuse)
  POST /whip-dead-ice/<id>        the real endpoint's answer, but its candidates point at a port
                                  where nothing answers (ICE must time out)
  POST /whip-links/<id>           the real endpoint, its 201 with Link headers naming a STUN and a
                                  TURN server (with a credential) that rtcshare must list as unused
  POST /whip-h264/<id>            the real endpoint taking H.264 only (as Broadcast Box or a SIP
                                  gateway does): VP8 is left out of its answer; an offer without
                                  H.264 is refused (400)
  POST /whip-relayed/<id>         the real endpoint behind an impairment relay (needs --relay): the
                                  relay is started between the answer's candidate and a port of its
                                  own, and the answer names the relay's port instead, so every
                                  datagram both ways (ICE, DTLS, media, RTCP) crosses it
  POST /whip-closing/<ms>/<id>    the real endpoint, but the server closes each session (DTLS
                                  close_notify) <ms> after it connected, as a server that drops
                                  its publishers does; counted in "server_closed"
  GET  /summary                   the summary so far, as JSON

aiortc never offers 127.0.0.1 as a host candidate (aioice skips loopback); it is given the
--host address, and only that one.

Relay: --relay BINARY --relay-port N --relay-stats FILE [--relay-arg=ARG ...] start `BINARY --listen
HOST:N --forward HOST:<aiortc's port> ARG...` for /whip-relayed; its statistics (one JSON line per
direction) go to FILE when the server stops.

Closing a session does not block the server while aiortc decodes what it still holds
(decoder_stop.py): other sessions and GET /summary are served meanwhile.

Frames: every decoded video frame's size is counted and its marker read (DESIGN.md "The test
source and its frame marker"): two rows of 32 blocks of 8x16 px at the top left, row 1 the
frame counter, row 2 the low 32 bits of the capture time in µs; MSB first; a block is 1 when
its mean luma is over 128.
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time

import aioice.ice
from aiohttp import web
from aiortc import RTCPeerConnection, RTCRtpReceiver, RTCSessionDescription

import decoder_stop  # beside this script, on its sys.path
from frame_gaps import FrameGaps
from frame_marker import read_marker
from aiortc.mediastreams import MediaStreamError


log = logging.getLogger("whip")


class State:
    def __init__(self):
        self.links = []
        self.sessions = {}  # id -> its newest RTCPeerConnection
        self.resources = {}  # resource name (id, or id~n for a later POST) -> RTCPeerConnection
        self.posts_by_id = {}
        self.consumers = {}  # id -> the tasks reading its tracks (each ends once its track has)
        self.connected = set()  # ids whose connection came up (a track of any other never ends)
        self.summary = {
            "posts": 0, "server_closed": 0, "deleted_resources": [], "answers": [], "offers": [], "offers_by_session": {}, "deletes": [], "patches": 0,
            "finished": [], "unfinished": [],
            "video_frames": 0, "sizes": {}, "markers_read": 0, "markers": [],
            "audio_frames": 0, "audio_sample_rates": [], "echo_bodies": [], "echoes": [], "requests": [],
            # The video figures again per WHIP session id (tests that share the server read theirs),
            # with the codec of the answer's video section.
            "by_session": {},
        }

    async def consume(self, track, sid, codec):
        """Counts what a track decodes, into the summary and the session's own figures
        ("by_session": video frames, sizes, markers, freezes, the video codec, audio frames)."""
        s = self.summary
        own = s["by_session"].setdefault(sid, {"video_frames": 0, "sizes": {}, "markers_read": 0, "markers": [],
                                                       "codec": None, "longest_gap_ms": None,
                                                       "gaps_over_200ms": [], "audio_frames": 0})
        if track.kind == "video":
            own["codec"] = codec  # the answer's video codec (the audio track has its own)
        gaps = FrameGaps()
        try:
            while True:
                frame = await track.recv()
                if track.kind == "video":
                    s["video_frames"] += 1
                    own["video_frames"] += 1
                    # The longest wait between two decoded frames after the first: a freeze.
                    gaps.frame()
                    own.update(gaps.summary())
                    size = f"{frame.width}x{frame.height}"
                    s["sizes"][size] = s["sizes"].get(size, 0) + 1
                    own["sizes"][size] = own["sizes"].get(size, 0) + 1
                    marker = read_marker(frame)
                    if marker is not None:
                        s["markers_read"] += 1
                        own["markers_read"] += 1
                        if len(own["markers"]) < 2000:
                            own["markers"].append(list(marker))
                        if len(s["markers"]) < 2000:
                            s["markers"].append(list(marker))
                else:
                    s["audio_frames"] += 1
                    own["audio_frames"] += 1
                    if frame.sample_rate not in s["audio_sample_rates"]:
                        s["audio_sample_rates"].append(frame.sample_rate)
        except MediaStreamError:
            pass

    async def finish(self, sid, limit=300):
        """After a session's close: lists it under "finished" once every track of it has ended
        (all it received decoded and counted), or under "unfinished" after `limit` seconds."""
        tasks = self.consumers.get(sid, []) if sid in self.connected else []
        done = True
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=limit)
            done = not pending
        self.summary["finished" if done else "unfinished"].append(sid)


class Relay:
    """The impairment relay of /whip-relayed: one process per server, started on the first such
    POST, stopped (and its statistics kept) when the server stops."""

    def __init__(self, args):
        self.args = args
        self.proc = None
        self.target = None

    def start(self, host, target_port):
        if self.target == (host, target_port):
            return  # the bundled sections share one transport: one relay
        if self.proc is not None:
            raise RuntimeError("one relayed session per server")
        self.target = (host, target_port)
        # Written under a temporary name, renamed once the relay has exited and said it all.
        self.out = open(self.args.relay_stats + ".tmp", "w")
        self.proc = subprocess.Popen([self.args.relay, "--listen", f"{host}:{self.args.relay_port}",
                                      "--forward", f"{host}:{target_port}", *self.args.relay_arg],
                                     stdout=self.out, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # bound before the answer sends the sender there
        if self.proc.poll() is not None:
            raise RuntimeError(f"the relay exited with {self.proc.returncode}")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
        if self.proc is not None:
            self.out.close()
            os.replace(self.args.relay_stats + ".tmp", self.args.relay_stats)
            self.proc = None


def make_app(state, port_holder, relay=None):
    s = state.summary

    async def record(request):
        s["requests"].append({"method": request.method, "path": request.path,
                              "auth": "Authorization" in request.headers})

    def ice_server_links(response):
        response.headers.add("Link", '<stun:127.0.0.1:3478>; rel="ice-server"')
        response.headers.add("Link", '<turn:127.0.0.1:3478?transport=udp>; rel="ice-server"; '
                                     'username="user"; credential="pass word"; credential-type="password", '
                                     '<https://example.invalid/doc>; rel="help"')

    async def whip_post(request, alter=None, links=False, only=None, close_after_ms=None):
        await record(request)
        sid = request.match_info["id"]
        offer = await request.text()
        if alter is through_relay:
            # aiortc must not reach the sender directly: the offer's candidates are pointed at
            # the discard port on loopback (its checks there fail), and aiortc learns the
            # relay's address from the checks that come through it (peer-reflexive).
            offer = "\r\n".join(discard_port(l) if l.startswith("a=candidate:") else l for l in offer.split("\r\n"))
        s["posts"] += 1
        s["offers"].append(offer)
        s["offers_by_session"][sid] = offer
        if request.content_type != "application/sdp":
            return web.Response(status=415, text="Content-Type must be application/sdp\n")
        pc = RTCPeerConnection()
        state.sessions[sid] = pc
        n = state.posts_by_id[sid] = state.posts_by_id.get(sid, 0) + 1
        resource = sid if n == 1 else f"{sid}~{n}"
        state.resources[resource] = pc
        if only is not None:
            # A transceiver made before the offer is read is the one the offer's video section
            # takes; its codec preferences are what the answer may keep (with their RTX).
            transceiver = pc.addTransceiver("video", direction="recvonly")
            codecs = RTCRtpReceiver.getCapabilities("video").codecs
            transceiver.setCodecPreferences([c for c in codecs if c.mimeType in (only, "video/rtx")])

        @pc.on("track")
        def on_track(track):
            log.info("track %s", track.kind)
            codec = None
            for t in pc.getTransceivers():
                if t.receiver.track is track and t._codecs:
                    codec = t._codecs[0].mimeType
            state.consumers.setdefault(sid, []).append(asyncio.ensure_future(state.consume(track, sid, codec)))

        async def close_later():
            await asyncio.sleep(close_after_ms / 1000)
            if state.sessions.get(sid) is pc:
                s["server_closed"] += 1
                await pc.close()

        @pc.on("connectionstatechange")
        def on_connection():
            if pc.connectionState == "connected":
                state.connected.add(sid)  # its receivers decode: their tracks end when it closes
                if close_after_ms is not None:
                    asyncio.ensure_future(close_later())

        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as e:  # what aiortc refuses in an offer
            log.info("offer refused: %s", e)
            return web.Response(status=400, text=f"offer refused: {e}\n")
        answer = pc.localDescription.sdp
        if alter is not None:
            answer = alter(answer)
        if alter is dead_ice:
            await pc.close()  # and nothing of aiortc answers either (no peer-reflexive path)
        s["answers"].append(answer)
        response = web.Response(status=201, text=answer, content_type="application/sdp",
                                headers={"Location": f"/whip/resource/{resource}", "ETag": f'"{resource}-1"'})
        if links:
            ice_server_links(response)
        if alter is None and only is None and close_after_ms is None:
            for value in state.links:
                response.headers.add("Link", value)
        return response

    def bad_fingerprint(answer):
        # Same hash functions and lengths, other digests: a certificate that is not the one offered.
        lines = []
        for line in answer.split("\r\n"):
            if line.startswith("a=fingerprint:"):
                name, digest = line.split(" ", 1)
                line = name + " " + ":".join("%02X" % (int(b, 16) ^ 0x5A) for b in digest.split(":"))
            lines.append(line)
        return "\r\n".join(lines)

    def no_common_codec(answer):
        # Every video rtpmap names a codec nobody offered (RTX keeps its name and apt).
        lines = []
        for line in answer.split("\r\n"):
            if line.startswith("a=rtpmap:") and ("VP8/" in line or "H264/" in line):
                line = line.replace("VP8/", "XV8/").replace("H264/", "X264/")
            lines.append(line)
        return "\r\n".join(lines)

    def video_rejected(answer):
        def port_zero(line):
            fields = line.split(" ")
            fields[1] = "0"
            return " ".join(fields)
        return "\r\n".join(port_zero(l) if l.startswith("m=video ") else l for l in answer.split("\r\n"))

    def through_relay(answer):
        # The candidate's port becomes the relay's; the relay forwards to aiortc's own port.
        lines = []
        for line in answer.split("\r\n"):
            if line.startswith("a=candidate:"):
                fields = line.split(" ")
                relay.start(fields[4], int(fields[5]))
                fields[5] = str(relay.args.relay_port)
                line = " ".join(fields)
            lines.append(line)
        return "\r\n".join(lines)

    def discard_port(candidate):
        fields = candidate.split(" ")
        fields[4], fields[5] = "127.0.0.1", "9"  # discard: nothing listens on UDP 9 here
        return " ".join(fields)

    def dead_ice(answer):
        return "\r\n".join(discard_port(l) if l.startswith("a=candidate:") else l for l in answer.split("\r\n"))

    async def whip_post_bad_fingerprint(request):
        return await whip_post(request, bad_fingerprint)

    async def whip_post_h264(request):
        return await whip_post(request, only="video/H264")

    async def whip_post_dead_ice(request):
        return await whip_post(request, dead_ice)

    async def whip_post_links(request):
        return await whip_post(request, links=True)

    async def whip_post_closing(request):
        return await whip_post(request, close_after_ms=int(request.match_info["ms"]))

    async def whip_post_no_codec(request):
        return await whip_post(request, no_common_codec)

    async def whip_post_video_rejected(request):
        return await whip_post(request, video_rejected)

    async def whip_post_relayed(request):
        if relay is None:
            return web.Response(status=501, text="start the server with --relay for /whip-relayed\n")
        return await whip_post(request, through_relay)

    async def resource_patch(request):
        await record(request)
        s["patches"] += 1
        return web.Response(status=405, headers={"Allow": "DELETE"})

    async def resource_delete(request):
        await record(request)
        resource = request.match_info["id"]
        sid = resource.split("~")[0]
        s["deletes"].append(sid)
        s["deleted_resources"].append(resource)
        log.info("DELETE %s", resource)
        pc = state.resources.pop(resource, None)
        if pc is not None and state.sessions.get(sid) is pc:
            state.sessions.pop(sid)
        if pc is not None:
            await pc.close()
            asyncio.ensure_future(state.finish(sid))
        return web.Response(status=200)

    async def status(request):
        await record(request)
        code = int(request.match_info["code"])
        return web.Response(status=code, text=f"status {code} from the test server\r\nsecond line\n")

    async def retry_after(request):
        await record(request)
        code = int(request.match_info["code"])
        return web.Response(status=code, text=f"status {code} from the test server\n",
                            headers={"Retry-After": request.match_info["n"]})

    async def retry_after_date(request):
        await record(request)
        code = int(request.match_info["code"])
        now = int(time.time())
        def http_date(t):
            return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(t))
        return web.Response(status=code, text=f"status {code} from the test server\n",
                            headers={"Date": http_date(now),
                                     "Retry-After": http_date(now + int(request.match_info["n"]))})

    async def fixed_answer(request, status, content_type, body):
        await record(request)
        sid = request.match_info["id"]
        return web.Response(status=status, body=body.encode(), content_type=content_type,
                            headers={"Location": f"/whip/resource/{sid}"})

    async def answer_200(request):
        return await fixed_answer(request, 200, "application/sdp", "v=0\r\n")

    async def answer_html(request):
        return await fixed_answer(request, 201, "text/html", "<html><body>hello</body></html>\n")

    async def answer_truncated(request):
        return await fixed_answer(request, 201, "application/sdp",
                                  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=vid")

    async def echo_auth(request):
        await record(request)
        return web.Response(status=401, text=f"bad credentials: {request.headers.get('Authorization', '')}\n")

    async def no_location(request):
        await record(request)
        return web.Response(status=201, text="v=0\r\n", content_type="application/sdp")

    async def absolute(request):
        await record(request)
        sid = request.match_info["id"]
        return web.Response(status=201, text="v=0\r\n", content_type="application/sdp",
                            headers={"Location": f"http://127.0.0.1:{port_holder[0]}/whip/resource/{sid}"})

    async def lowercase(request):
        await record(request)
        sid = request.match_info["id"]
        response = web.Response(status=201, text="v=0\r\n", content_type="application/sdp")
        response.headers["location"] = f"resource/{sid}"  # relative to /lowercase/<id>
        return response

    async def echo(request):
        await record(request)
        body = await request.text()
        s["echo_bodies"].append(body)
        # Each echo with what it carried, so a test finds its own among those of tests beside it.
        s["echoes"].append({"body": body, "method": request.method, "auth": "Authorization" in request.headers})
        response = web.Response(status=201, text=body, content_type="application/sdp",
                                headers={"Location": "/whip/resource/echo",
                                         "X-Method": request.method,
                                         "X-Auth-Seen": "yes" if "Authorization" in request.headers else "no"})
        ice_server_links(response)
        return response

    async def redirect(request):
        await record(request)
        code = int(request.match_info["code"])
        return web.Response(status=code, headers={"Location": "/" + request.match_info["rest"]})

    async def hang(request):
        await record(request)
        await asyncio.sleep(3600)
        return web.Response(status=500)

    async def big(request):
        await record(request)
        return web.Response(status=201, text="a" * (100 << 10), content_type="application/sdp",
                            headers={"Location": "/whip/resource/big"})

    async def summary(request):
        return web.json_response(s)

    app = web.Application()
    app.add_routes([
        web.post("/whip/{id}", whip_post),
        web.post("/whip-bad-fingerprint/{id}", whip_post_bad_fingerprint),
        web.post("/whip-dead-ice/{id}", whip_post_dead_ice),
        web.post("/whip-links/{id}", whip_post_links),
        web.post("/whip-h264/{id}", whip_post_h264),
        web.post("/whip-relayed/{id}", whip_post_relayed),
        web.post("/whip-closing/{ms}/{id}", whip_post_closing),
        web.patch("/whip/resource/{id}", resource_patch),
        web.delete("/whip/resource/{id}", resource_delete),
        web.patch("/lowercase/resource/{id}", resource_patch),
        web.delete("/lowercase/resource/{id}", resource_delete),
        web.post("/status/{code}", status),
        web.post("/echo-auth", echo_auth),
        web.post("/no-location", no_location),
        web.post("/absolute/{id}", absolute),
        web.post("/lowercase/{id}", lowercase),
        web.post("/echo", echo),
        web.post("/redirect/{code}/{rest:.*}", redirect),
        web.post("/hang", hang),
        web.delete("/hang", hang),
        web.delete("/status/{code}", status),
        web.post("/retry-after/{code}/{n}", retry_after),
        web.post("/retry-after-date/{code}/{n}", retry_after_date),
        web.post("/answer-200/{id}", answer_200),
        web.post("/answer-html/{id}", answer_html),
        web.post("/answer-truncated/{id}", answer_truncated),
        web.post("/whip-no-codec/{id}", whip_post_no_codec),
        web.post("/whip-video-rejected/{id}", whip_post_video_rejected),
        web.post("/big", big),
        web.get("/summary", summary),
    ])
    return app


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--link", action="append", default=[],
                        help="a Link header value every /whip/<id> answer carries (an ICE server, RFC 9725 4.6)")
    parser.add_argument("--relay", help="rtcshare-relay, for /whip-relayed")
    parser.add_argument("--relay-port", type=int, help="the port the relay listens on (the answer names it)")
    parser.add_argument("--relay-stats", help="where the relay's JSON statistics go")
    parser.add_argument("--relay-arg", action="append", default=[], help="one impairment argument (repeatable)")
    args = parser.parse_args()
    if args.relay and not (args.relay_port and args.relay_stats):
        parser.error("--relay needs --relay-port and --relay-stats")
    relay = Relay(args) if args.relay else None
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [args.host] if use_ipv4 else []
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    decoder_stop.install()

    state = State()
    state.links = args.link
    port_holder = [0]
    runner = web.AppRunner(make_app(state, port_holder, relay), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port_holder[0] = site._server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(f"{port_holder[0]}\n")
    os.replace(args.port_file + ".tmp", args.port_file)
    log.info("listening on %s:%d", args.host, port_holder[0])

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def watch_parent(parent):  # the test process died without stopping us: stop too
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
        stop.set()

    asyncio.ensure_future(watch_parent(os.getppid()))
    await stop.wait()
    for pc in {id(pc): pc for pc in [*state.sessions.values(), *state.resources.values()]}.values():
        await pc.close()
    # What the sessions received is decoded and counted before the summary is written.
    consumers = [t for sid, tasks in state.consumers.items() if sid in state.connected for t in tasks]
    if consumers:
        await asyncio.wait(consumers, timeout=30)
    if relay is not None:
        relay.stop()
    with open(args.summary + ".tmp", "w") as f:
        json.dump(state.summary, f, indent=1)
    os.replace(args.summary + ".tmp", args.summary)
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
