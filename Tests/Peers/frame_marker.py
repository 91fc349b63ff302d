"""The frame marker of rtcshare's test source, read from a decoded frame (DESIGN.md "The test
source and its frame marker"): two rows of 32 blocks of 8x16 px at the top left, row 1 the frame
counter, row 2 the low 32 bits of the capture time in µs; MSB first; a block is 1 when its mean
luma is over 128. Shared by the test peers (whip_server.py, janus_subscriber.py)."""


def read_marker(frame):
    """(counter, capture_time) from a decoded frame, or None when a block is not clearly 0 or 1."""
    if frame.width < 256 or frame.height < 32:
        return None
    y = frame.to_ndarray(format="yuv420p")[:32, :256].astype("int32")
    rows = []
    for r in range(2):
        value = 0
        for b in range(32):
            mean = y[r * 16:(r + 1) * 16, b * 8:(b + 1) * 8].mean()
            if 60 < mean < 190:  # neither black (16) nor white (235): not a marker
                return None
            value = (value << 1) | (1 if mean > 128 else 0)
        rows.append(value)
    return rows[0], rows[1]
