#!/usr/bin/env python3
"""An actd worker in plain Python 3, standard library only.

Run it under actd, in dispatch (the default) or exclusive mode:

    actd --listen 127.0.0.1:8080 -- python3 examples/python-worker/worker.py
    actd --listen 127.0.0.1:8080 --accept exclusive -- python3 examples/python-worker/worker.py
    curl http://127.0.0.1:8080/        # python-worker slot=0 pid=1234

Every actd child execs this program with the listening sockets at fds
3..3+LISTEN_FDS-1 (non-blocking) and the back-channel, a SOCK_SEQPACKET
socket, at ACTD_CHANNEL_FD. The back-channel carries 8-byte messages,
docs/protocol.md:

    child -> master   H hello (value = pid, listener = capabilities)
                      I idle   B busy (listener)   O pong (value)
    master -> child   A accept (listener)     P ping (value)   D drain
                      C connection (listener, the socket attached: revision 3)

dispatch:  wait for an A order, accept once, send B, serve, send I;
           an accept that finds nothing sends I at once. Under an accept
           filter (actd --accept-filter http) the master accepts itself and
           sends C with the connection instead: send B, serve it, send I.
           Our hello announces that we take such connections (HANDOFF).
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

# The wire of revision 3, as actd's package protocol has it (the Go names in
# upper case); protocol/languages_test.go checks that they agree. This
# worker sends neither R nor K and is no zygote, but names them all.
REVISION = 3
WIRE = 1
HEADER = struct.Struct("!cBHI")  # type, wire format, listener (u16), value (u32): 8 bytes
MAX_TEXT = 248  # the longest text after the header (R)
HELLO, IDLE, BUSY, PONG, SERVED, REQUEST, KEEP = b"H", b"I", b"B", b"O", b"S", b"R", b"K"  # to the master
ACCEPT, PING, DRAIN, CONNECTION, FORK = b"A", b"P", b"D", b"C", b"F"  # from the master
HANDOFF = 1  # capability bit 0: we take connections handed over (C)
CAP_FORK = 2  # capability bit 1: a zygote's, not ours
SLOT = os.environ.get("ACTD_SLOT", "?")


def send(channel, kind, listener=0, value=0):
    channel.send(HEADER.pack(kind, WIRE, listener, value))


def receive(channel):
    """Return the master's next message as (type, listener, value, conn).

    conn is the connection a C carries (a socket), else None. The type is
    b"" when the master is gone (EOF). Anything that is not a version-1
    message ends the worker: the master sent garbage.
    """
    try:
        msg, fds, _, _ = socket.recv_fds(channel, 16, 1)
    except ConnectionResetError:
        msg, fds = b"", []
    if not msg:
        return b"", 0, 0, None
    if len(msg) != HEADER.size:
        raise SystemExit(f"python-worker: garbage on the back-channel: {msg!r}")
    kind, wire, listener, value = HEADER.unpack(msg)
    if wire != WIRE:
        raise SystemExit(f"python-worker: wire format {wire}, want {WIRE}")
    if (kind == CONNECTION) != (len(fds) == 1):
        raise SystemExit(f"python-worker: {kind!r} with {len(fds)} file descriptors")
    conn = socket.socket(fileno=fds[0]) if fds else None
    return kind, listener, value, conn


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
        body = f"python-worker slot={SLOT} pid={os.getpid()}\n".encode()
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
    send(channel, BUSY, index)
    serve(conn)
    send(channel, IDLE)
    return True


def dispatch(channel, listeners):
    """Carry out the master's orders until a drain or EOF."""
    while True:
        kind, index, value, conn = receive(channel)
        if kind == ACCEPT:
            if not accept(channel, index, listeners[index]):
                send(channel, IDLE)  # nothing there: idle at once
        elif kind == CONNECTION:  # handed over, as if we had accepted it
            conn.setblocking(True)
            send(channel, BUSY, index)
            serve(conn)
            send(channel, IDLE)
        elif kind == PING:
            send(channel, PONG, value=value)
        else:
            return  # D, or EOF


def wait_for_go_ahead(channel):
    """Wait for the master's A before registering; False on a drain or EOF.

    The kernel wakes the earliest-registered waiter first, and the master
    hands out go-aheads one at a time in slot order: so low slots stay hot.
    """
    while True:
        kind, _, value, _ = receive(channel)
        if kind == ACCEPT:
            return True
        if kind != PING:
            return False  # D, or EOF
        send(channel, PONG, value=value)


def exclusive(channel, listeners):
    """Accept by ourselves, one connection at a time, until a drain or EOF."""
    if not wait_for_go_ahead(channel):
        return
    ep = select.epoll()
    for listener in listeners:  # in listener order, as the Go worker does
        ep.register(listener, select.EPOLLIN | select.EPOLLEXCLUSIVE)
    ep.register(channel, select.EPOLLIN)
    send(channel, IDLE)  # registered
    index_of = {listener.fileno(): i for i, listener in enumerate(listeners)}
    while True:
        ready = [fd for fd, _ in ep.poll()]
        if channel.fileno() in ready:  # orders first: a drain wins over a waiting connection
            kind, _, value, _ = receive(channel)
            if kind == ACCEPT:  # a lower slot registered after us: to the back of the queue
                for listener in listeners:
                    ep.unregister(listener)
                    ep.register(listener, select.EPOLLIN | select.EPOLLEXCLUSIVE)
                send(channel, IDLE)
            elif kind == PING:
                send(channel, PONG, value=value)
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
        raise SystemExit(f"python-worker: ACTD_ACCEPT_MODE={mode}: want dispatch or exclusive, under actd")
    listeners = [socket.socket(fileno=3 + i) for i in range(int(os.environ["LISTEN_FDS"]))]
    for listener in listeners:
        listener.setblocking(False)  # already so in the file; tell Python too
    channel = socket.socket(fileno=int(os.environ["ACTD_CHANNEL_FD"]))
    send(channel, HELLO, HANDOFF, os.getpid())
    send(channel, IDLE)
    if mode == "exclusive":
        exclusive(channel, listeners)
    else:
        dispatch(channel, listeners)


if __name__ == "__main__":
    main()
