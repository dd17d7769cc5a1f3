#!/usr/bin/env python3
"""An actd worker in plain Python 3, standard library only, exactly as it
was written against protocol revision 1 (only its name changed): the
examples test runs it to show that such workers keep working unchanged.

Run it under actd, in dispatch (the default) or exclusive mode:

    actd --listen 127.0.0.1:8080 -- python3 examples/testdata/worker-rev1.py
    actd --listen 127.0.0.1:8080 --accept exclusive -- python3 examples/testdata/worker-rev1.py
    curl http://127.0.0.1:8080/        # python-worker-rev1 slot=0 pid=1234

Every actd child execs this program with the listening sockets at fds
3..3+LISTEN_FDS-1 (non-blocking) and the back-channel, a SOCK_SEQPACKET
socket, at ACTD_CHANNEL_FD. The back-channel carries 8-byte messages,
docs/protocol.md:

    child -> master   H hello (value = pid)   I idle   B busy (listener)   O pong (value)
    master -> child   A accept (listener)     P ping (value)   D drain

dispatch:  wait for an A order, accept once, send B, serve, send I;
           an accept that finds nothing sends I at once.
exclusive: once the master says A (its go-ahead, given in slot order),
           register the listeners in our own epoll set (EPOLLEXCLUSIVE),
           send I, and accept by ourselves; still send B and I, answer P,
           obey D. A later A means: register again (a lower slot
           restarted and registered behind us), then send I.
A drain order, or EOF on the back-channel (the master is gone), ends the
worker after the connection in hand.
"""

import os
import select
import signal
import socket
import struct

VERSION = 1
FORMAT = "!cBHI"  # type, version, listener (u16), value (u32): 8 bytes
SLOT = os.environ.get("ACTD_SLOT", "?")


def send(channel, kind, listener=0, value=0):
    channel.send(struct.pack(FORMAT, kind, VERSION, listener, value))


def receive(channel):
    """Return the master's next message as (type, listener, value).

    The type is b"" when the master is gone (EOF). Anything that is not a
    version-1 message ends the worker: the master sent garbage.
    """
    try:
        msg = channel.recv(16)
    except ConnectionResetError:
        msg = b""
    if not msg:
        return b"", 0, 0
    if len(msg) != struct.calcsize(FORMAT):
        raise SystemExit(f"python-worker-rev1: garbage on the back-channel: {msg!r}")
    kind, version, listener, value = struct.unpack(FORMAT, msg)
    if version != VERSION:
        raise SystemExit(f"python-worker-rev1: protocol version {version}, want {VERSION}")
    return kind, listener, value


def serve(conn):
    """Answer one HTTP request with our slot and PID, then close."""
    conn.settimeout(5)  # one connection at a time: a slow client must not hold us
    try:
        head = b""
        while b"\r\n\r\n" not in head and b"\n\n" not in head and len(head) < 65536:
            data = conn.recv(4096)
            if not data:
                return  # the client went away
            head += data
        body = f"python-worker-rev1 slot={SLOT} pid={os.getpid()}\n".encode()
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass  # timeout or reset: nothing more to say to this client
    finally:
        conn.close()


def accept(channel, index, listener):
    """Accept one connection on listener and serve it, between B and I.

    Return False if there was none to accept (another child was faster).
    """
    try:
        conn, _ = listener.accept()
    except (BlockingIOError, ConnectionAbortedError):
        return False
    send(channel, b"B", index)
    serve(conn)
    send(channel, b"I")
    return True


def dispatch(channel, listeners):
    """Carry out the master's orders until a drain or EOF."""
    while True:
        kind, index, value = receive(channel)
        if kind == b"A":
            if not accept(channel, index, listeners[index]):
                send(channel, b"I")  # nothing there: idle at once
        elif kind == b"P":
            send(channel, b"O", value=value)
        else:
            return  # D, or EOF


def wait_for_go_ahead(channel):
    """Wait for the master's A before registering; False on a drain or EOF.

    The kernel wakes the earliest-registered waiter first, and the master
    hands out go-aheads one at a time in slot order: so low slots stay hot.
    """
    while True:
        kind, _, value = receive(channel)
        if kind == b"A":
            return True
        if kind != b"P":
            return False  # D, or EOF
        send(channel, b"O", value=value)


def exclusive(channel, listeners):
    """Accept by ourselves, one connection at a time, until a drain or EOF."""
    if not wait_for_go_ahead(channel):
        return
    ep = select.epoll()
    for listener in listeners:  # in listener order, as the Go worker does
        ep.register(listener, select.EPOLLIN | select.EPOLLEXCLUSIVE)
    ep.register(channel, select.EPOLLIN)
    send(channel, b"I")  # registered
    index_of = {listener.fileno(): i for i, listener in enumerate(listeners)}
    while True:
        ready = [fd for fd, _ in ep.poll()]
        if channel.fileno() in ready:  # orders first: a drain wins over a waiting connection
            kind, _, value = receive(channel)
            if kind == b"A":  # a lower slot registered after us: to the back of the queue
                for listener in listeners:
                    ep.unregister(listener)
                    ep.register(listener, select.EPOLLIN | select.EPOLLEXCLUSIVE)
                send(channel, b"I")
            elif kind == b"P":
                send(channel, b"O", value=value)
            else:
                return  # D, or EOF
        for fd in ready:
            if fd in index_of:
                accept(channel, index_of[fd], listeners[index_of[fd]])


def main():
    # Ctrl-C reaches the whole process group: leave it to the master, which
    # drains us with a D order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    mode = os.environ.get("ACTD_ACCEPT_MODE")
    if mode not in ("dispatch", "exclusive"):
        raise SystemExit(f"python-worker-rev1: ACTD_ACCEPT_MODE={mode}: want dispatch or exclusive, under actd")
    listeners = [socket.socket(fileno=3 + i) for i in range(int(os.environ["LISTEN_FDS"]))]
    for listener in listeners:
        listener.setblocking(False)  # already so in the file; tell Python too
    channel = socket.socket(fileno=int(os.environ["ACTD_CHANNEL_FD"]))
    send(channel, b"H", value=os.getpid())
    send(channel, b"I")
    if mode == "exclusive":
        exclusive(channel, listeners)
    else:
        dispatch(channel, listeners)


if __name__ == "__main__":
    main()
