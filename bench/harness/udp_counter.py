"""The receiver of the screen case: a UDP socket on loopback that only counts what arrives
(datagrams and bytes, per phase) and when the first one came. Counting needs no decoding, and
the screen case asks for bandwidth, not pictures."""
import socket
import threading
import time


class UDPCounter:
    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.first_at = None
        self.bytes = 0
        self.packets = 0
        self._stop = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            now = time.monotonic()
            with self._lock:
                if self.first_at is None:
                    self.first_at = now
                self.bytes += len(data)
                self.packets += 1

    def totals(self):
        with self._lock:
            return time.monotonic(), self.bytes, self.packets

    def close(self):
        self._stop = True
        self._thread.join()
        self.sock.close()


def mbit_per_s(earlier, later):
    """Mbit/s of UDP payload between two `totals()`."""
    return round((later[1] - earlier[1]) * 8 / (later[0] - earlier[0]) / 1e6, 3)
