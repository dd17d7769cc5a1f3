"""The file descriptors actd passes a child, kept to the child itself.

actd hands each child its listeners at fd 3 and up (LISTEN_FDS of them)
and its back-channel at ACTD_CHANNEL_FD, all without close-on-exec, as
systemd's socket activation does. Left so, every program the application
runs in a way that passes on inheritable fds (os.system, os.exec*,
os.posix_spawn, subprocess with close_fds=False) gets them too, and keeps
the port open, or accepts on it and swallows connections, after this
child is gone (docs/operations.md, "A child's descendants"). So are the
extra fds after the channel: the access log's file (ACTD_ACCESS_LOG
fd:N) and the TLS certificates' memfds (ACTD_TLS).
"""

import os

FIRST_FD = 3  # listener i is fd 3 + i (protocol/fds.go)


def close_on_exec(environ=os.environ):
    """Mark the listeners, the back-channel and the extra fds close-on-exec.

    Reads LISTEN_FDS, ACTD_CHANNEL_FD, ACTD_ACCESS_LOG and ACTD_TLS from environ; a variable that is
    missing or not a number, and an fd that is not open, are skipped.
    """
    for fd in passed(environ):
        try:
            os.set_inheritable(fd, False)
        except OSError:
            pass


def passed(environ):
    """Return the fds environ says actd passed: listeners, the channel,
    then the extra fds (the access log's, the TLS memfds)."""
    fds = []
    count = environ.get("LISTEN_FDS", "")
    if count.isdigit():
        fds.extend(range(FIRST_FD, FIRST_FD + int(count)))
    channel = environ.get("ACTD_CHANNEL_FD", "")
    if channel.isdigit():
        fds.append(int(channel))
    log = environ.get("ACTD_ACCESS_LOG", "")
    if log.startswith("fd:") and log[3:].isdigit():
        fds.append(int(log[3:]))
    for entry in environ.get("ACTD_TLS", "").split():
        fd = entry.partition("=")[2]
        if fd.isdigit():
            fds.append(int(fd))
    return fds
