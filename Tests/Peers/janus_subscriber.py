#!/usr/bin/env python3
"""A Janus VideoRoom subscriber around aiortc, for rtcshare's Janus test (JanusWHIPTests.swift).

    python3 janus_subscriber.py --janus http://10.99.0.1:8088/janus --room 1234 \
        --summary S.json [--wait 30]

Talks Janus's plain HTTP API (create a session, attach janus.plugin.videoroom, wait for a
publisher with `listparticipants`, `join` as a subscriber to its streams, answer Janus's offer
with aiortc, `start`), long-polls the session for events (which also keeps it alive), decodes
every video frame and reads its frame marker. When Janus hangs the subscription up (the
publisher left), ICE closes or media stops for --idle seconds, on SIGTERM/SIGINT, or when --wait passes with no publisher, it writes a JSON summary to --summary and exits:
once every frame received has been decoded and counted (on a busy machine aiortc's decoding lags;
at most 30 s more), written under a temporary name and renamed, so a reader never sees half of it.

Frame marker (DESIGN.md "The test source and its frame marker"): two rows of 32 blocks of
8x16 px at the top left, row 1 the frame counter, row 2 the low 32 bits of the capture time;
MSB first; a block is 1 when its mean luma is over 128 (the same reader as whip_server.py).

The summary: video_frames, video_packets (RTP packets received), connected_at (when ICE
connected, CLOCK_MONOTONIC seconds: when the subscription began, on the clock rtcshare's
capture times and a test's time.monotonic()/clock_gettime share), markers_read, first_counter / last_counter (of readable markers),
counters and capture times (µs, marker row 2; up to 4000), the longest gap between two decoded
frames and each gap over 200 ms (frame_gaps.py), sizes, audio_frames, the publisher's feed, Janus's subscribe offer and
aiortc's answer, and an error if something failed.
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
import uuid

import aiohttp
from aiortc import RTCPeerConnection, RTCSessionDescription

import decoder_stop  # beside this script, on its sys.path
from frame_gaps import FrameGaps
from frame_marker import read_marker
from aiortc.mediastreams import MediaStreamError

log = logging.getLogger("janus-sub")


class Janus:
    def __init__(self, http, base):
        self.http, self.base = http, base.rstrip("/")

    async def post(self, path, body):
        body = dict(body, transaction=uuid.uuid4().hex[:12])
        async with self.http.post(self.base + path, json=body) as r:
            reply = await r.json(content_type=None)
        if reply.get("janus") == "error":
            raise RuntimeError(f"Janus error: {reply.get('error')}")
        return reply


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--janus", required=True)
    parser.add_argument("--room", type=int, required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--wait", type=float, default=30, help="seconds to wait for a publisher")
    parser.add_argument("--idle", type=float, default=3, help="stop after this long without media")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    decoder_stop.install()
    consumers = []  # the tasks reading the tracks; each ends once its track has

    s = {"video_frames": 0, "markers_read": 0, "first_counter": None, "last_counter": None,
         "counters": [], "times": [], "sizes": {}, "audio_frames": 0, "feed": None, "offer": None,
         "answer": None, "error": None, "ice_state": None, "connected_at": None}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # A parent may have started us with these blocked (the mask is inherited across exec).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def watch_parent(parent):  # the test process died without stopping us: stop too
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
        stop.set()

    asyncio.ensure_future(watch_parent(os.getppid()))

    gaps = FrameGaps()

    async def consume(track):
        try:
            while True:
                frame = await track.recv()
                s["last_frame_at"] = loop.time()
                if track.kind == "video":
                    s["video_frames"] += 1
                    gaps.frame()
                    s.update(gaps.summary())
                    size = f"{frame.width}x{frame.height}"
                    s["sizes"][size] = s["sizes"].get(size, 0) + 1
                    marker = read_marker(frame)
                    if marker is not None:
                        s["markers_read"] += 1
                        if s["first_counter"] is None:
                            s["first_counter"] = marker[0]
                            log.info("first marker: counter %d", marker[0])
                        s["last_counter"] = marker[0]
                        if len(s["counters"]) < 4000:
                            s["counters"].append(marker[0])
                            s["times"].append(marker[1])
                else:
                    s["audio_frames"] += 1
        except MediaStreamError:
            pass

    pc = None
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=40)) as http:
        janus = Janus(http, args.janus)
        try:
            session = (await janus.post("", {"janus": "create"}))["data"]["id"]
            handle = (await janus.post(f"/{session}", {"janus": "attach", "plugin": "janus.plugin.videoroom"}))["data"]["id"]
            path = f"/{session}/{handle}"
            deadline = loop.time() + args.wait
            feed = None
            while feed is None and not stop.is_set():
                reply = await janus.post(path, {"janus": "message", "body": {"request": "listparticipants", "room": args.room}})
                participants = reply["plugindata"]["data"].get("participants", [])
                feed = next((p["id"] for p in participants if p.get("publisher")), None)
                if feed is None:
                    if loop.time() > deadline:
                        raise RuntimeError(f"no publisher in room {args.room} after {args.wait} s")
                    await asyncio.sleep(0.1)
            if feed is None:
                raise RuntimeError("stopped before a publisher appeared")
            s["feed"] = feed
            log.info("publisher %s; subscribing", feed)
            await janus.post(path, {"janus": "message", "body": {
                "request": "join", "ptype": "subscriber", "room": args.room, "streams": [{"feed": feed}]}})
            offer = None
            while offer is None:
                async with http.get(f"{janus.base}/{session}?maxev=1") as r:
                    event = await r.json(content_type=None)
                if event.get("janus") == "event" and event.get("jsep", {}).get("type") == "offer":
                    offer = event["jsep"]["sdp"]
                elif event.get("janus") == "event" and "error" in event.get("plugindata", {}).get("data", {}):
                    raise RuntimeError(f"join refused: {event['plugindata']['data']}")
            s["offer"] = offer
            pc = RTCPeerConnection()

            @pc.on("track")
            def on_track(track):
                log.info("track %s", track.kind)
                consumers.append(asyncio.ensure_future(consume(track)))

            @pc.on("iceconnectionstatechange")
            def on_ice():
                s["ice_state"] = pc.iceConnectionState
                log.info("ICE %s", pc.iceConnectionState)
                if pc.iceConnectionState in ("connected", "completed") and s["connected_at"] is None:
                    s["connected_at"] = time.monotonic()
                if pc.iceConnectionState in ("closed", "failed"):
                    stop.set()

            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            s["answer"] = pc.localDescription.sdp
            await janus.post(path, {"janus": "message", "body": {"request": "start", "room": args.room},
                                    "jsep": {"type": "answer", "sdp": pc.localDescription.sdp}})

            async def poll():  # long-polls keep the session alive and tell when the feed ends
                while not stop.is_set():
                    try:
                        async with http.get(f"{janus.base}/{session}?maxev=5") as r:
                            events = await r.json(content_type=None)
                        for event in events if isinstance(events, list) else [events]:
                            data = event.get("plugindata", {}).get("data", {})
                            if event.get("janus") == "hangup" or "unpublished" in data or data.get("left") == "ok":
                                log.info("subscription ended: %s", event.get("janus"))
                                await asyncio.sleep(0.5)  # what is in flight still decodes
                                stop.set()
                    except Exception:
                        await asyncio.sleep(0.5)

            poller = asyncio.ensure_future(poll())

            async def idle():  # media stopped (the share ended) for --idle seconds: done
                while not stop.is_set():
                    await asyncio.sleep(0.2)
                    if s.get("last_frame_at") and loop.time() - s["last_frame_at"] > args.idle:
                        log.info("no media for %.1f s: done", args.idle)
                        stop.set()

            asyncio.ensure_future(idle())
            await stop.wait()
            poller.cancel()
        except Exception as e:
            log.info("failed: %s", e)
            s["error"] = str(e)
        finally:
            if pc is not None:
                try:  # what Janus forwarded, decodable or not: every video SSRC's packets. aiortc
                    # keeps statistics per SSRC before unwrapping RTX but reports them all under one
                    # stats id, so once Janus forwarded a resend on the RTX SSRC getStats() holds
                    # only that stream's count (1 of ~1250 seen): the receivers' own tables are read.
                    counts = [stream.packets_received for t in pc.getTransceivers() if t.kind == "video"
                              for stream in getattr(t.receiver, "_RTCRtpReceiver__remote_streams", {}).values()]
                    if counts:
                        s["video_packets"] = sum(counts)
                    else:
                        for st in (await pc.getStats()).values():
                            if st.type == "inbound-rtp" and st.kind == "video":
                                s["video_packets"] = st.packetsReceived
                except Exception as e:
                    log.info("no stats: %s", e)
                await pc.close()
                if consumers and s["connected_at"] is not None:  # the tracks end once what they received is decoded
                    await asyncio.wait(consumers, timeout=30)
            s.pop("last_frame_at", None)
            with open(args.summary + ".tmp", "w") as f:
                json.dump(s, f, indent=1)
            os.replace(args.summary + ".tmp", args.summary)


if __name__ == "__main__":
    asyncio.run(main())
