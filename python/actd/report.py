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

The clock is SIGALRM from setitimer(ITIMER_REAL): its handler runs in the
main thread between two bytecodes, or when a blocking call returns EINTR.
The main code sends on the channel only with the timer off (self.timing
false), so the two never interleave.
"""

import signal
import time

from . import channel as ch

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
        self.timing = False  # the timer is set and its handler may send
        self.listener = 0
        self.reported = False  # the connection in hand was reported B
        self.text = None  # a callable returning the request in hand, or None
        self.text_sent = False
        self.pending = 0  # short connections not yet reported with S
        self.flushed = clock()
        signal.signal(signal.SIGALRM, self._alarm)

    def start(self, listener, busy=False):
        """Note a connection on listener; busy: B was already sent for it."""
        self.listener, self.reported, self.text = listener, busy, None
        if not busy:
            self._arm()

    def request(self, text):
        """Note a request; text() returns it as "METHOD /target"."""
        self.text, self.text_sent = text, False
        if self.reported:
            self._arm()

    def request_done(self):
        """Note the request's end (the connection may wait for another)."""
        if self.reported:
            self._disarm()

    def done(self, idle):
        """Note the connection's end, and report it.

        idle: send I if the connection was reported B (exclusive mode; a
        dispatch-mode child sends its I itself when its batch ends).
        """
        self._disarm()
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

    def _arm(self):
        self.timing = True
        signal.setitimer(signal.ITIMER_REAL, BUSY_AFTER)

    def _disarm(self):
        if self.timing:
            self.timing = False
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _alarm(self, signum, frame):
        if not self.timing:
            return  # came in just as the timer was stopped
        self.timing = False
        try:
            if not self.reported:
                self.flush()
                self.channel.send(ch.BUSY, self.listener)
                self.reported = True
            if self.text is not None and not self.text_sent:
                self.text_sent = True
                self.channel.report_request(self.text())
        except OSError:
            pass  # the master is gone: the accept loop sees EOF later
