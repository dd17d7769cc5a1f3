"""Handing a slow client's response to the master (W, revision 5).

When the last write of a response would keep the child waiting for a
client that reads slowly (the socket's buffer stays full for PATIENCE),
the rest goes to the master with the connection: a one-element body's
rest in a memfd, a wsgi.file_wrapper's regular file as itself (its fd,
offset, length). The master sends it as the client reads and parks or
closes the connection; the child serves the next one. See
docs/protocol.md, "Write completion", and docs/python.md.
"""

import os

PATIENCE = 0.010  # seconds a write may wait before the rest goes to the master (as the Go library)


class Finisher:
    """The way out of the responses on the connection in hand (one
    Finisher a connection, not a request): hooks (an actd.worker.Worker)
    sends W; reader (actd.http) says whether part of a next request is
    read already.

    done is True once a response went to the master: the connection is
    then the master's, and the server reads and writes it no more.
    """

    __slots__ = ("hooks", "fd", "reader", "done")

    def __init__(self, hooks, fd, reader):
        self.hooks = hooks
        self.fd = fd
        self.reader = reader
        self.done = False

    def limit(self):
        """Return the most bytes the master would take now: 0 if it would
        not (no offload, or part of a next request is read already)."""
        if self.done or self.reader.buf:
            return 0
        return self.hooks.offloads(self.fd)

    def file(self, data_fd, offset, length, keep_alive):
        """Hand the connection to the master with length bytes of data_fd
        (a regular file, still the caller's) from offset; keep_alive: the
        connection may be parked once it is sent (the response leaves it
        open, and the request's body is read whole). Returns True if the
        master has it, False if it would not take it."""
        if length > self.limit():
            return False
        try:
            self.done = self.hooks.finish(self.fd, data_fd, offset, length, keep_alive)
        except OSError:
            return False  # the master is gone: the child writes it itself
        return self.done

    def bytes(self, rest, keep_alive):
        """Hand the connection to the master with rest (bytes or a
        memoryview) in a memfd. Returns True if the master has it, False
        if it would not take it or no memfd could be made."""
        if len(rest) > self.limit():
            return False
        try:
            mem = os.memfd_create("actd-response", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            return False  # the child writes it itself
        try:
            view = memoryview(rest)
            while view:
                view = view[os.write(mem, view):]
            return self.file(mem, 0, len(rest), keep_alive)
        except OSError:
            return False
        finally:
            os.close(mem)


def offloading(hooks):
    """Return whether hooks (an actd.worker.Worker, or Standalone) may
    hand responses to the master at all."""
    return getattr(hooks, "offload_max", 0) > 0
