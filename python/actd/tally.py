"""Request tallies: what the children answered, for the master's metrics.

The master never sees a response. A worker of protocol revision 6 tells it
what it answered with T (docs/protocol.md, "Request tallies"): the counts
since its previous T, by status and by duration, in a fixed binary trailer.
The master adds them up for /metrics (actd_http_requests_total,
actd_http_request_duration_seconds) and `actd status`.

Recorder counts each access-log entry (it stands in for the access log,
and passes each entry on to the real one, if any) and sends what it counted
at most once a second, from a timer thread, never blocking (MSG_DONTWAIT:
dropped when the channel is full), and what is left at exit.
"""

import atexit
import bisect
import os
import socket
import struct
import threading
import time

from .channel import REVISION, TALLY, WIRE

# The trailer's layout, as package protocol has it (protocol/tally.go).
CODES = (200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 413, 429, 431, 500, 502, 503, 504)
BOUNDS = (5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000)  # µs, inclusive
NUM_CODES = len(CODES) + 6  # the codes, a class each for 1xx..5xx, other
NUM_BUCKETS = len(BOUNDS) + 1  # the last: +Inf
PACKET = struct.Struct(f"!cBHI{NUM_CODES}I{NUM_BUCKETS}IQ")
TALLY_SIZE = PACKET.size - 8
EVERY = 1.0  # seconds between two T at least
U32 = 0xFFFFFFFF

INDEX = {code: i for i, code in enumerate(CODES)}


def code_index(status):
    """Return the index in the codes of status, a str ("404") or int."""
    try:
        n = int(status)
    except (TypeError, ValueError):
        return NUM_CODES - 1
    if n in INDEX:
        return INDEX[n]
    if 100 <= n < 600:
        return len(CODES) + n // 100 - 1
    return NUM_CODES - 1


def bucket_index(micros):
    """Return the duration bucket of micros: the first whose bound is
    micros or more, else the last (+Inf)."""
    return bisect.bisect_left(BOUNDS, micros)


class Recorder:
    """An access log that counts each entry for the master, then hands it
    to log (an actd.accesslog.AccessLog, or None)."""

    def __init__(self, log, channel_fd):
        self.inner = log
        self.alone = log is None  # no access log: add() is all a request needs (actd.wsgi)
        self.fd = channel_fd
        self.sock = None  # opened at the first send: a zygote's child has its own channel at fd
        self.lock = threading.Lock()
        self.codes = [0] * NUM_CODES
        self.index = {}  # status as add got it: its code_index (a few statuses recur)
        self.buckets = [0] * NUM_BUCKETS
        self.micros = 0
        self.pending = False
        self.timer = None
        self.sent = 0.0  # time.monotonic() of the last T

    def log(self, entry):
        """Count entry (its status and micros), then log it. An entry with
        no answer sent (status "-") counts nothing."""
        if entry.status != "-":
            self.add(entry.status, entry.micros)
        if self.inner is not None:
            self.inner.log(entry)

    def add(self, status, micros):
        """Count an answer of status (str or int) that took micros."""
        code = self.index.get(status)
        if code is None:
            code = code_index(status)
            if len(self.index) < 64:
                self.index[status] = code
        micros = micros if micros > 0 else 0
        with self.lock:
            self.codes[code] += 1
            self.buckets[bisect.bisect_left(BOUNDS, micros)] += 1
            self.micros += micros
            self.pending = True
            if self.timer is None:
                self.timer = threading.Timer(max(0.0, EVERY - (time.monotonic() - self.sent)), self.fire)
                self.timer.daemon = True
                self.timer.start()

    def fire(self):
        with self.lock:
            self.timer = None
            self._send()

    def flush(self):
        """Send what is counted and not sent yet (at exit)."""
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            self._send()

    def _send(self):
        if not self.pending:
            return
        packet = PACKET.pack(TALLY, WIRE, 0, 0, *(min(n, U32) for n in self.codes),
                             *(min(n, U32) for n in self.buckets), self.micros)
        self.codes, self.buckets, self.micros = [0] * NUM_CODES, [0] * NUM_BUCKETS, 0
        self.pending, self.sent = False, time.monotonic()
        try:
            if self.sock is None:
                self.sock = socket.socket(fileno=os.dup(self.fd))
            self.sock.send(packet, socket.MSG_DONTWAIT)
        except OSError:
            pass  # a full channel drops the counts; a gone master wants none


def wrap(log, environ=os.environ):
    """Return log, or a Recorder around it where the master takes T
    (ACTD_PROTOCOL at least 6, a back-channel): the access log as
    actd.wsgi uses it, counting each request for the master."""
    try:
        revision = int(environ.get("ACTD_PROTOCOL", ""))
        fd = int(environ.get("ACTD_CHANNEL_FD", ""))
    except ValueError:
        return log
    if min(revision, REVISION) < 6:
        return log
    recorder = Recorder(log, fd)
    atexit.register(recorder.flush)
    return recorder
