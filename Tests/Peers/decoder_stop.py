"""aiortc (1.16) stops a receiver by joining its decoder thread (RTCRtpReceiver.__stop_decoder,
called by RTCPeerConnection.close() and when DTLS closes), and the thread first decodes everything
still queued: the event loop is blocked all that while. On a busy machine a 720p backlog takes
tens of seconds, and a test peer that blocks that long answers nothing else (the WHIP server that
tests share failed their POSTs, and their GET /summary timed out with an empty reply).

`install()` makes the stop hand the thread its end marker and return at once: the thread decodes
the rest and then ends the track, as it did under the join, while the loop keeps serving. A
consumer knows that everything received has been decoded when its `track.recv()` raises
MediaStreamError. Shared by the test peers (whip_server.py, janus_subscriber.py)."""

import logging

from aiortc import RTCRtpReceiver

log = logging.getLogger("decoder-stop")


def _stop_without_waiting(self):
    thread = self._RTCRtpReceiver__decoder_thread
    if thread:
        self._RTCRtpReceiver__decoder_queue.put(None)
        self._RTCRtpReceiver__decoder_thread = None


def install():
    if hasattr(RTCRtpReceiver, "_RTCRtpReceiver__stop_decoder"):
        RTCRtpReceiver._RTCRtpReceiver__stop_decoder = _stop_without_waiting
    else:  # another aiortc: closing may block the loop again
        log.warning("aiortc has no RTCRtpReceiver.__stop_decoder: receivers stop as aiortc does")
