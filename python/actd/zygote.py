"""The zygote of actd --preload (docs/protocol.md, "Preload: the zygote").

When actd starts this adapter with ACTD_ROLE=zygote, the application has
been imported once already (actd.wsgi's main); this process then says
hello with the fork capability and forks one child per F order. Each child
gets the back-channel attached to its order at ACTD_CHANNEL_FD, its slot in
ACTD_SLOT, and runs the ordinary worker loop, sharing the application's
pages with the zygote copy-on-write.

The zygote forks twice: the middle process exits at once, so the child is
reparented to the master (a child subreaper), which waits for it as for
any child it started itself.
"""

import os
import signal
import socket
import sys
import traceback

from . import channel as ch

ROLE = "zygote"  # ACTD_ROLE's value


def is_zygote(environ=os.environ):
    """Return whether actd started this process as its zygote."""
    return environ.get("ACTD_ROLE") == ROLE


def serve(run_child, environ=os.environ):
    """Say hello as a zygote, then fork a child per F order until D or EOF.

    run_child() runs in each forked child, with its environment and fds in
    place, and returns when the child is done (its worker loop ended).
    """
    channel = ch.Channel.from_environ(environ)
    channel.send(ch.HELLO, ch.CAP_FORK, os.getpid())
    while True:
        msg, fds, _, _ = channel.sock.recvmsg(64, socket.CMSG_SPACE(4 * 4))
        received = _fds(fds)
        if not msg:
            return
        kind, _, slot, value = ch.HEADER.unpack(msg) if len(msg) == ch.HEADER.size else (b"?", 0, 0, 0)
        if kind == ch.FORK and len(received) == 1:
            _fork(channel, received[0], slot, run_child, environ)
            continue
        for fd in received:
            os.close(fd)
        if kind == ch.PING:
            channel.send(ch.PONG, 0, value)
        elif kind == ch.DRAIN:
            return
        else:
            raise ch.Garbage(f"{msg!r} with {len(received)} fds, to a zygote")


def _fds(ancillary):
    """Return the descriptors in recvmsg's ancillary data."""
    out = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            out.extend(int.from_bytes(data[i:i + 4], sys.byteorder) for i in range(0, usable, 4))
    return out


def _fork(channel, fd, slot, run_child, environ):
    """Fork the child of slot through a middle process that exits at once."""
    pid = os.fork()
    if pid:
        os.close(fd)
        os.waitpid(pid, 0)
        return
    code = 1
    try:
        if os.fork():
            code = 0  # the middle process: the child is reparented to the master
        else:
            _become_child(channel, fd, slot, environ)
            run_child()
            code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _become_child(channel, fd, slot, environ):
    """Put the forked child's fds, environment and signals in place."""
    target = channel.fd
    channel.sock.detach()  # the zygote's channel: replaced below, never used here
    os.dup2(fd, target, inheritable=False)  # close-on-exec, as actd.fds leaves the zygote's
    os.close(fd)
    environ["ACTD_SLOT"] = str(slot)
    environ.pop("ACTD_ROLE", None)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
