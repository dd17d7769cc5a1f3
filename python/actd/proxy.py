"""The PROXY protocol: the client's address from a trusted balancer.

actd's --proxy-protocol-from names, per listener, the networks whose
connections start with a PROXY header (HAProxy's doc/proxy-protocol.txt,
versions 1 and 2): the master passes them as ACTD_PROXY_FROM, space-
separated INDEX=CIDR entries (Trust). A connection accepted on listener
INDEX from one of INDEX's networks must start with a header; others are
served without one (a PROXY line from elsewhere is then a bad request).

parse() judges the bytes a connection starts with: a whole header (its
length, and the client's address, or None where the header keeps the
socket's own: v2 LOCAL, v1 UNKNOWN, a family other than TCP over IPv4 or
IPv6), one not yet whole, or bad. consume() reads one header off a
connection, never a byte past it. See docs/python.md, "PROXY protocol".
"""

import ipaddress
import re
import select
import socket
import struct
import time

V1_PREFIX = b"PROXY "
V1_LIMIT = 107  # bytes of a v1 line, CRLF included
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
V2_HEAD = struct.Struct("!12sBBH")  # signature, version and command, family, length
V2_LIMIT = 1024  # bytes after the 16-byte head
HEADER_LIMIT = V2_HEAD.size + V2_LIMIT  # the most bytes of any header
V2_LOCAL, V2_PROXY = 0x20, 0x21
V2_TCP4, V2_TCP6 = 0x11, 0x21
ADDRESS_LIMIT = 48  # bytes of an address trailer on the back-channel
PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT

WHOLE, PARTIAL, BAD = "whole", "partial", "bad"  # what parse() finds
# parse's fast path: a whole v1 TCP4 line, each address a dotted quad as
# inet_pton takes it (0 to 255, no leading zero), each port as v1_port
# takes it but for its bound (checked after); anything else the long way
_OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_QUAD = _OCTET + rb"(?:\." + _OCTET + rb"){3}"
_PORT = rb"(0|[1-9][0-9]{0,4})"
V1_TCP4 = re.compile(rb"PROXY TCP4 (" + _QUAD + rb") " + _QUAD + rb" " + _PORT + rb" " + _PORT + rb"\r\n")
# the lines V1_TCP4 took, up to the ports (b"PROXY TCP4 SRC DST"): SRC as
# a str; and their destination ports with the CR after them (b"DPORT\r":
# parse's first step cuts at the LF). A balancer's lines share
# their addresses (a client's, this host's) and destination port (its
# own), not their source ports: a line that starts as one of these and
# ends in one of those needs only its source port checked (parse's first
# step), not the match (several times the cost)
V1_SEEN = {}
V1_PORTS = set()
V1_SEEN_LIMIT = 1024


class BadHeader(Exception):
    """A PROXY header that is malformed, or not whole in time: the
    connection is closed without an answer."""


def parse(buf):
    """Return (what, length, address) for buf (bytes), what a connection
    from a trusted source starts with.

    what is WHOLE (length is the header's bytes, address the client's
    (host, port) or None), PARTIAL (buf is the start of a header that
    may still become good: all of buf is header) or BAD (no header, or a
    malformed one); length and address are 0 and None but for WHOLE.
    A v1 TCP4 line like one taken before costs a partition at the LF and
    known_v1; any other header is parsed the long way (parse_long),
    which gives the same answers.
    """
    line, lf, _ = buf.partition(b"\n")  # one byte: a memchr; the CR is other's (V1_PORTS)
    client = known_v1(line) if lf else None
    if client is not None:
        return WHOLE, len(line) + 1, client
    return parse_long(buf)


def known_v1(line):
    """Return the client's (host, port) of line, a header's bytes up to
    its LF (the CR in), if it is a v1 TCP4 line like one parse_long took
    before (its addresses in V1_SEEN, its destination port and CR in
    V1_PORTS) with a good source port; else None (parse_long judges it).
    Costs a split, two lookups and the source port's check."""
    try:
        head, port, other = line.rsplit(b" ", 2)
    except ValueError:
        return None
    source = V1_SEEN.get(head)
    # a port as _PORT takes it, but 0 (parse_long's): digits, no leading
    # zero (a digit string below b"1" starts with "0"), at most 65535; no
    # bound on the line's length is needed: a head V1_SEEN holds, a port
    # and another V1_PORTS holds are at most 42 + 1 + 5 + 1 + 6 bytes
    if source is not None and other in V1_PORTS and port.isdigit() and port >= b"1":
        number = int(port)
        if number <= 65535:
            return source, number
    return None


def parse_long(buf):
    """parse's answer for buf the long way: one match for a whole v1 TCP4
    line (V1_TCP4, whose addresses and destination port are then kept in
    V1_SEEN and V1_PORTS), else each version's parser."""
    tcp4 = V1_TCP4.match(buf)
    if tcp4 is not None and int(tcp4[2]) <= 65535 and int(tcp4[3]) <= 65535:
        source = tcp4[1].decode("ascii")
        if len(V1_SEEN) >= V1_SEEN_LIMIT:
            V1_SEEN.clear()  # bounded: many clients, each new line costs its match again
        V1_SEEN[buf[:tcp4.start(2) - 1]] = source
        if len(V1_PORTS) >= V1_SEEN_LIMIT:
            V1_PORTS.clear()
        V1_PORTS.add(tcp4[3] + b"\r")
        return WHOLE, tcp4.end(), (source, int(tcp4[2]))
    if buf[:len(V2_SIGNATURE)] == V2_SIGNATURE[:len(buf)] and buf:
        return parse_v2(buf)
    if buf[:len(V1_PREFIX)] == V1_PREFIX[:len(buf)]:
        return parse_v1(buf)
    return BAD, 0, None


def parse_v1(buf):
    end = buf.find(b"\r\n", 0, V1_LIMIT)
    if end < 0:
        if len(buf) >= V1_LIMIT or b"\n" in buf or b"\r" in buf[:-1]:
            return BAD, 0, None
        return PARTIAL, 0, None
    parts = buf[:end].split(b" ")
    if len(parts) >= 2 and parts[1] == b"UNKNOWN":
        return WHOLE, end + 2, None  # anything may follow UNKNOWN
    if len(parts) != 6 or parts[1] not in (b"TCP4", b"TCP6"):
        return BAD, 0, None
    version = 4 if parts[1] == b"TCP4" else 6
    source, port = v1_address(parts[2], version), v1_port(parts[4])
    if source is None or port is None or v1_address(parts[3], version) is None or v1_port(parts[5]) is None:
        return BAD, 0, None
    return WHOLE, end + 2, (source, port)


def v1_address(raw, version):
    """Return raw as an address str of version (IPv6 in its shortest
    form), or None. inet_pton takes what ipaddress takes, at a tenth of
    its cost: a dotted quad without leading zeros, or an IPv6 text."""
    family = socket.AF_INET if version == 4 else socket.AF_INET6
    try:
        packed = socket.inet_pton(family, raw.decode("ascii"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return raw.decode("ascii") if version == 4 else socket.inet_ntop(family, packed)


def v1_port(raw):
    if not raw.isdigit() or len(raw) > 5 or (len(raw) > 1 and raw[:1] == b"0"):
        return None
    port = int(raw)
    return port if port <= 65535 else None


def parse_v2(buf):
    if len(buf) < V2_HEAD.size:
        return PARTIAL, 0, None
    _, command, family, size = V2_HEAD.unpack_from(buf)
    if command not in (V2_LOCAL, V2_PROXY) or size > V2_LIMIT:
        return BAD, 0, None
    total = V2_HEAD.size + size
    if len(buf) < total:
        return PARTIAL, 0, None
    body = buf[V2_HEAD.size:total]
    if command == V2_LOCAL or family not in (V2_TCP4, V2_TCP6):
        return WHOLE, total, None
    width = 4 if family == V2_TCP4 else 16
    if size < 2 * width + 4:
        return BAD, 0, None
    host = socket.inet_ntop(socket.AF_INET if width == 4 else socket.AF_INET6, body[:width])
    port = struct.unpack_from("!H", body, 2 * width)[0]
    return WHOLE, total, (host, port)


def consume(sock, timeout):
    """Read the PROXY header sock starts with, and no byte past it;
    return the client's (host, port), or None where the header keeps the
    socket's own address. Raises BadHeader for a bad header, or one not
    whole within timeout seconds (0: no limit), OSError as the socket
    does. Bytes of a header that is not yet whole are read as they come
    (all of them are header), so each wait is for new bytes."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    seen = b""
    poll = None  # made only when the header is not whole at once
    while True:
        try:
            peek = sock.recv(HEADER_LIMIT - len(seen), PEEK)
        except BlockingIOError:
            peek = None
        if peek == b"":
            raise BadHeader("closed before the PROXY header was whole")
        if peek:
            what, length, address = parse(seen + peek)
            if what == BAD:
                raise BadHeader(f"malformed PROXY header: {(seen + peek)[:40]!r}")
            take = length - len(seen) if what == WHOLE else len(peek)
            seen += read_exactly(sock, take)
            if what == WHOLE:
                return address
        if poll is None:
            poll = select.poll()
            poll.register(sock.fileno(), select.POLLIN)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and (left <= 0 or not poll.poll(left * 1000)):
            raise BadHeader(f"no whole PROXY header in {timeout:g} s")
        if left is None:
            poll.poll()


def read_exactly(sock, n):
    """Read n bytes that are known to be in sock's receive queue."""
    out = sock.recv(n)  # all of them, almost always
    while len(out) < n:
        data = sock.recv(n - len(out))
        if not data:
            raise BadHeader("closed in the middle of the PROXY header")
        out += data
    return out


def network(text):
    """Return the ip_network text names: a CIDR, or a bare address as a
    /32 or /128. Raises ValueError."""
    return ipaddress.ip_network(text.strip(), strict=False)


def host_of(addr):
    """Return the ipaddress of an accepted connection's peer (a tuple from
    accept or getpeername), an IPv4-mapped IPv6 one as IPv4; None for a
    unix socket's peer or one that is no address."""
    if not isinstance(addr, tuple):
        return None
    try:
        ip = ipaddress.ip_address(addr[0].partition("%")[0])
    except ValueError:
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def within(ip, networks):
    """Return whether ip (an ipaddress, or None) is in one of networks."""
    return ip is not None and any(ip in n for n in networks if n.version == ip.version)


class Trust:
    """The networks each listener takes PROXY headers from
    (ACTD_PROXY_FROM)."""

    def __init__(self, by_listener):
        self.by_listener = by_listener  # listener index: [ip_network]
        self.seen = {}  # (index, peer host): the answer; a balancer has few addresses

    @classmethod
    def from_text(cls, text):
        """Return the Trust of ACTD_PROXY_FROM's value, or None if it names
        no network. Raises ValueError for an entry that is not INDEX=CIDR."""
        by_listener = {}
        for entry in text.split():
            index, eq, cidr = entry.partition("=")
            if not eq or not index.isdigit():
                raise ValueError(f"ACTD_PROXY_FROM entry {entry!r}: want INDEX=CIDR")
            by_listener.setdefault(int(index), []).append(network(cidr))
        return cls(by_listener) if by_listener else None

    def trusts(self, index, addr):
        """Return whether a connection from addr (as accept gives it)
        accepted on listener index must start with a PROXY header. The
        answer is kept per listener and peer host (a balancer has few)."""
        try:
            return self.seen[index, addr[0]]
        except (KeyError, IndexError):
            return self.judge(index, addr)

    def judge(self, index, addr):
        """trusts' answer the long way, kept in seen but for a unix
        socket's peer (a str, no address to trust: trusts looks it up by
        its first character, and finds nothing, since a host is longer)."""
        if type(addr) is not tuple:
            return False
        if len(self.seen) >= 4096:
            self.seen.clear()  # bounded: clients reach a child directly too
        networks = self.by_listener.get(index)
        answer = self.seen[index, addr[0]] = bool(networks) and within(host_of(addr), networks)
        return answer


def join(host, port):
    """Return (host, port) as the back-channel's address text, HOST:PORT,
    an IPv6 host in brackets (Go's net.JoinHostPort), as UTF-8 bytes."""
    host = str(host)
    text = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return text.encode("utf-8")


def split(raw):
    """Return the (host, port) of an address trailer (bytes HOST:PORT);
    ValueError if it is not one."""
    host, colon, port = raw.decode("utf-8").rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise ValueError(f"address trailer {raw!r}: want HOST:PORT")
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError(f"address trailer {raw!r}: unclosed bracket")
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"address trailer {raw!r}: an IPv6 host wants brackets")
    return host, int(port)
