"""Writing a response the master gave back (U, revision 5).

A response a child handed the master (W) that the master did not take,
beyond its --offload-total, comes back to an idle child with the
connection, the data and its range (docs/protocol.md, "Write
completion"): the child writes it as a worker without "offload" would,
blocking, and nothing of the next request is read.
"""

import os
import select

SEND_TIMEOUT = 60.0  # seconds a client may take no byte, as the master's --send-timeout


def write_unsent(got, timeout=SEND_TIMEOUT):
    """Write got.length bytes of got.data from got.offset to got.conn (an
    actd.channel.Unsent) with sendfile(2), and close got.data; got.conn
    stays the caller's. Returns True if all went; False if the client
    went away, took no byte for timeout seconds, or the data ended first.
    The connection may be non-blocking (its first child set it so): a
    write that would block waits for the socket."""
    try:
        return send_range(got.conn, got.data, got.offset, got.length, timeout)
    except OSError:
        return False
    finally:
        os.close(got.data)


def send_range(conn, data, offset, length, timeout):
    """Send length bytes of data from offset to conn; False if the data
    ends first or the client takes no byte for timeout seconds."""
    end = offset + length
    while offset < end:
        try:
            n = os.sendfile(conn, data, offset, end - offset)
        except BlockingIOError:
            if not writable(conn, timeout):
                return False
            continue
        if n == 0:
            return False
        offset += n
    return True


def writable(fd, timeout):
    """Return whether fd can take bytes within timeout seconds."""
    p = select.poll()
    p.register(fd, select.POLLOUT)
    return bool(p.poll(timeout * 1000))
