"""TLS on the listeners actd names (revision 6, capability "tls").

The master reads --tls-cert and --tls-key and passes each TLS listener's
certificate chain and key, PEM, in one sealed memfd: ACTD_TLS lists
INDEX=FD entries (contexts). A worker terminates TLS on those listeners:
TLS 1.2 at least, the ssl module's default ciphers, ALPN http/1.1, and a
handshake that may take HANDSHAKE_TIMEOUT (handshake). A TLS connection
is never given back (K), parked or finished by the master (W): the worker
keeps a keep-alive one itself, and serves it through TLSConnection.

Under an accept filter a TLS listener's connections are ready once the
bytes seen hold a whole ClientHello (hello_ready), or are no TLS
handshake at all (the handshake then fails fast).
"""

import select
import ssl

from .connection import Connection

HANDSHAKE_TIMEOUT = 10.0  # seconds
HANDSHAKE = 22  # TLS record type
CLIENT_HELLO = 1  # handshake message type
RECORD = 5  # bytes of a record header: type, version (2), length (2)


def contexts(text):
    """Return {listener index: ssl.SSLContext} for ACTD_TLS's value
    (INDEX=FD entries), each loaded from /proc/self/fd/FD. Raises
    ValueError for an entry that is not INDEX=FD, ssl.SSLError or OSError
    for a certificate or key that does not load."""
    out = {}
    for entry in text.split():
        index, eq, fd = entry.partition("=")
        if not eq or not index.isdigit() or not fd.isdigit():
            raise ValueError(f"ACTD_TLS entry {entry!r}: want INDEX=FD")
        out[int(index)] = context(f"/proc/self/fd/{fd}")
    return out


def context(path):
    """Return a server SSLContext with the chain and key in path (PEM,
    the chain first)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(path)
    return ctx


def handshake(ctx, sock, timeout=HANDSHAKE_TIMEOUT):
    """Return sock, a connected socket, as a non-blocking ssl.SSLSocket
    after the server's handshake; None if the handshake failed or a step
    of it took over timeout seconds (the socket is then closed). sock
    itself is detached either way."""
    tls = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    tls.settimeout(timeout)
    try:
        tls.do_handshake()
    except (ssl.SSLError, OSError):
        tls.close()
        return None
    tls.setblocking(False)
    return tls


def hello_ready(peek, limit):
    """Return whether peek, the bytes a client sent so far (at most limit
    peeked), holds a whole ClientHello: handshake records carrying the
    first handshake message to its 3-byte length. True at once for bytes
    that are no TLS handshake record, and for a full peek; False for
    nothing yet."""
    if not peek:
        return False
    if len(peek) >= limit:
        return True
    message = b""
    at = 0
    while at < len(peek):
        if peek[at] != HANDSHAKE:
            return True  # not a handshake: the handshake fails at once
        if len(peek) - at < RECORD:
            return False
        size = int.from_bytes(peek[at + 3:at + 5], "big")
        message += peek[at + RECORD:at + RECORD + size]
        if len(message) >= 4:
            if message[0] != CLIENT_HELLO:
                return True
            if len(message) >= 4 + int.from_bytes(message[1:4], "big"):
                return True
        if at + RECORD + size > len(peek):
            return False
        at += RECORD + size
    return False


class TLSConnection(Connection):
    """A Connection over a non-blocking ssl.SSLSocket: reads and writes
    wait as a Connection's do, for the socket's readiness the TLS layer
    asks for (a read may need to write, and a write to read). No response
    goes to the master: send_last and sendfile_last send all themselves,
    and a file is read and sent through TLS, not with sendfile(2)."""

    __slots__ = ()

    def __init__(self, sock, timeout, arrived=False):
        super().__init__(sock, timeout, True)  # the handshake read: no poll first

    def pending(self):
        return self.sock.pending()

    def recv(self, size):
        while True:
            try:
                return self.sock.recv(size)
            except ssl.SSLWantReadError:
                self._wait(select.POLLIN)
            except ssl.SSLWantWriteError:
                self._wait(select.POLLOUT)
            except ssl.SSLZeroReturnError:
                return b""
            except ssl.SSLError as err:
                raise ConnectionResetError(str(err)) from None

    def sendall(self, data):
        rest = memoryview(data)
        while rest:
            try:
                rest = rest[self.sock.send(rest):]
            except ssl.SSLWantWriteError:
                self._wait(select.POLLOUT)
            except ssl.SSLWantReadError:
                self._wait(select.POLLIN)
            except ssl.SSLError as err:
                raise ConnectionResetError(str(err)) from None

    def send_last(self, data, finish):
        self.sendall(data)
        return False

    def sendfile(self, file, count):
        sent = 0
        while sent < count:
            block = file.read(min(count - sent, 65536))
            if not block:
                break
            self.sendall(block)
            sent += len(block)
        return sent

    def sendfile_last(self, file, count, finish):
        return self.sendfile(file, count), False
