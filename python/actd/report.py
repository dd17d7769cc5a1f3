"""What the master hears about the connections a child serves.

A connection that lasts is reported busy (B) once it has run BUSY_AFTER,
then idle (I) when it ends; short ones are counted and reported together
in one served message (S), after SERVED_BATCH of them or SERVED_DELAY
after the last report. So a child under a load of short connections costs
the master one wakeup per batch, not two per connection, as the Go
library does (docs/protocol.md, "Exclusive mode").

The request in hand is reported (R, revision 2) once it has run
BUSY_AFTER, so `actd status` and the busy-timeout log line name what a
slow or stuck child is doing, at no cost for the quick ones.

The clock is SIGALRM from setitimer(ITIMER_REAL), every BUSY_AFTER while
connections follow one another: its handler runs in the main thread between
two bytecodes (or when a blocking call returns EINTR), reports what has run
long enough, and stops the timer when it finds nothing left to watch (the
child idle, or a reported connection between requests). So a saturated
child pays one signal per BUSY_AFTER, not two setitimer calls per
connection. The main code sends on the channel only while no connection is
active (self.active false), but for an O that answers a ping while a
connection waits (actd.worker's wait_next: one packet, no field here), and
the handler sends only while one is, so the two never interleave; start()
and request() publish their fields before they look at the timer, so the
handler never sees half of them.
"""

import signal
import time

from . import channel as ch
from .channel import join_address

BUSY_AFTER = 0.005  # seconds a connection or request runs before it is reported
SERVED_BATCH = 32
SERVED_DELAY = 0.050


class Reporter:
    """Reports for one child; one per process, reused for every connection.

    A connection goes start() ... request()/request_done() ... done().
    """

    def __init__(self, channel, clock=time.monotonic):
        self.channel = channel
        self.clock = clock
        self.timing = False  # the interval timer is set
        self.alarming = False  # the handler runs
        self.active = False  # a connection is in hand: the handler may send
        self.listener = 0
        self.started = 0.0
        self.reported = False  # the connection in hand was reported B
        self.text = None  # a callable returning the request in hand, or None
        self.client = None  # the connection's client (host, port) from a PROXY header, or None
        self.text_sent = False
        self.request_started = 0.0
        self.pending = 0  # short connections not yet reported with S
        self.flushed = clock()
        signal.signal(signal.SIGALRM, self._alarm)

    def start(self, listener, busy=False):
        """Note a connection on listener; busy: B was already sent for it."""
        self.listener, self.started, self.reported, self.text = listener, self.clock(), busy, None
        self.active = True
        if not self.timing:  # the test here, not in a call: this runs per connection
            self._watch()

    def request(self, text):
        """Note a request; text() returns it as "METHOD /target"."""
        self.request_started, self.text_sent = self.clock(), False
        self.text = text
        if not self.timing:
            self._watch()

    def request_done(self):
        """Note the request's end (the connection may wait for another)."""
        self.text = None

    def end(self):
        """Note that the connection in hand is over, without reporting it
        yet: from here on only the caller sends (a K before done's I)."""
        self.active = False
        self.text = None

    def done(self, idle):
        """Note the connection's end, and report it.

        idle: send I if the connection was reported B (exclusive mode; a
        dispatch-mode child sends its I itself when its batch ends).
        """
        self.active = False  # end(), inline: this runs per connection
        self.text = None
        if self.reported:
            if idle:
                self.channel.send(ch.IDLE)
            return
        self.pending += 1
        if self.pending >= SERVED_BATCH or self.clock() - self.flushed >= SERVED_DELAY:
            self.flush()

    def flush(self):
        """Send S for the short connections counted so far, if any."""
        if self.pending:
            self.channel.send(ch.SERVED, 0, self.pending)
            self.pending = 0
        self.flushed = self.clock()

    def flush_in(self):
        """Return how long until the counted connections are due, or None."""
        if not self.pending:
            return None
        return max(0.0, SERVED_DELAY - (self.clock() - self.flushed))

    def stop(self):
        """Stop the timer (the child is about to exit or wait long)."""
        self.timing = False
        signal.setitimer(signal.ITIMER_REAL, 0)

    def _described(self, text):
        """Return text() followed by " from HOST:PORT" when a PROXY
        header gave the client (behind a balancer the client is worth
        showing, as in Go's), made only when a request is reported."""
        client = self.client
        if client is None:
            return text()
        return f"{text()} from {join_address(*client[:2]).decode()}"

    def _watch(self):
        if not self.timing:
            self.timing = True
            signal.setitimer(signal.ITIMER_REAL, BUSY_AFTER, BUSY_AFTER)

    def _alarm(self, signum, frame):
        # A handler can be entered again by the next tick (Python checks
        # for signals between bytecodes, its handlers included) if it runs
        # longer than BUSY_AFTER, as on a loaded machine: skip that tick.
        if self.alarming:
            return
        self.alarming = True
        try:
            self._tick()
        finally:
            self.alarming = False

    def _tick(self):
        if not self.active:
            self.stop()  # idle: the next connection sets the timer again
            return
        now = self.clock()
        try:
            if not self.reported and now - self.started >= BUSY_AFTER:
                self.reported = True
                self.flush()
                self.channel.send(ch.BUSY, self.listener)
            text = self.text
            if text is not None and not self.text_sent and now - self.request_started >= BUSY_AFTER:
                self.text_sent = True
                self.channel.report_request(self._described(text))
        except OSError:
            pass  # the master is gone: the accept loop sees EOF later
        if self.reported and (self.text is None or self.text_sent):
            self.stop()  # nothing more to report until the next request
