"""The PROXY protocol (revision 6): actd.proxy's parser and reader, the
address trailers on the back-channel, and workers run as real processes
that read headers, against a test that plays their master."""

import os
import random
import socket
import struct
import threading
import time
import unittest
from unittest import mock

from actd import channel as ch
from actd import forwarded, proxy
from actd.proxy import BAD, PARTIAL, WHOLE
from actd.worker import capabilities, proxy_for
from helpers import wait_arrived
from test_report import Master
from test_screen import CLOSE, Child, connect

SIG = proxy.V2_SIGNATURE


def v2(command=0x21, family=0x11, body=None, extra=b""):
    """Return a v2 header; body defaults to 192.0.2.1:5000 -> 198.51.100.2:80."""
    if body is None:
        body = {0x11: socket.inet_pton(socket.AF_INET, "192.0.2.1") + socket.inet_pton(socket.AF_INET, "198.51.100.2")
                + struct.pack("!HH", 5000, 80),
                0x21: socket.inet_pton(socket.AF_INET6, "2001:db8::1") + socket.inet_pton(socket.AF_INET6, "2001:db8::2")
                + struct.pack("!HH", 443, 8443)}.get(family, b"\x00" * 216)
    body += extra
    return SIG + bytes([command, family]) + struct.pack("!H", len(body)) + body


V1 = b"PROXY TCP4 192.0.2.1 198.51.100.2 5000 80\r\n"
TLV = b"\x04\x00\x03abc"  # a type-length-value after the addresses: skipped


class ParseTest(unittest.TestCase):
    def test_parse(self):
        v1_long = b"PROXY UNKNOWN " + b"x" * 100 + b"\r\n"
        cases = [
            # v1
            ("v1 TCP4", V1 + b"GET", WHOLE, len(V1), ("192.0.2.1", 5000)),
            ("v1 TCP6", b"PROXY TCP6 2001:db8::1 2001:db8::2 443 8443\r\n", WHOLE, 45, ("2001:db8::1", 443)),
            ("v1 UNKNOWN", b"PROXY UNKNOWN\r\nGET", WHOLE, 15, None),
            ("v1 UNKNOWN with addresses", b"PROXY UNKNOWN ffff:f::1 ffff::2 1 2\r\n", WHOLE, 37, None),
            ("v1 longest", b"PROXY UNKNOWN " + b"x" * 91 + b"\r\n", WHOLE, 107, None),
            ("v1 over 107 bytes", v1_long, BAD, 0, None),
            ("v1 no CRLF in 107 bytes", b"PROXY UNKNOWN " + b"x" * 93, BAD, 0, None),
            ("v1 partial", V1[:20], PARTIAL, 0, None),
            ("v1 partial before CR LF", V1[:-1], PARTIAL, 0, None),
            ("v1 prefix", b"PRO", PARTIAL, 0, None),
            ("nothing yet", b"", PARTIAL, 0, None),
            ("v1 bare LF", b"PROXY TCP4 192.0.2.1 198.51.100.2 5000 80\n", BAD, 0, None),
            ("v1 bad family", b"PROXY UDP4 192.0.2.1 198.51.100.2 5000 80\r\n", BAD, 0, None),
            ("v1 IPv6 in TCP4", b"PROXY TCP4 2001:db8::1 2001:db8::2 1 2\r\n", BAD, 0, None),
            ("v1 bad address", b"PROXY TCP4 192.0.2.300 198.51.100.2 5000 80\r\n", BAD, 0, None),
            ("v1 port over 65535", b"PROXY TCP4 192.0.2.1 198.51.100.2 65536 80\r\n", BAD, 0, None),
            ("v1 port leading zero", b"PROXY TCP4 192.0.2.1 198.51.100.2 05000 80\r\n", BAD, 0, None),
            ("v1 two spaces", b"PROXY TCP4  192.0.2.1 198.51.100.2 5000 80\r\n", BAD, 0, None),
            ("v1 missing port", b"PROXY TCP4 192.0.2.1 198.51.100.2 5000\r\n", BAD, 0, None),
            ("no header", b"GET / HTTP/1.1\r\n\r\n", BAD, 0, None),
            ("proxy in lower case", b"proxy TCP4", BAD, 0, None),
            # v2
            ("v2 TCP4", v2() + b"GET", WHOLE, 28, ("192.0.2.1", 5000)),
            ("v2 TCP6", v2(family=0x21), WHOLE, 52, ("2001:db8::1", 443)),
            ("v2 TCP4 with TLVs", v2(extra=TLV), WHOLE, 28 + len(TLV), ("192.0.2.1", 5000)),
            ("v2 LOCAL", v2(command=0x20, family=0x00, body=b""), WHOLE, 16, None),
            ("v2 LOCAL with addresses", v2(command=0x20), WHOLE, 28, None),
            ("v2 UDP4: as LOCAL", v2(family=0x12, body=v2()[16:]), WHOLE, 28, None),
            ("v2 unix: as LOCAL", v2(family=0x31), WHOLE, 16 + 216, None),
            ("v2 UNSPEC: as LOCAL", v2(family=0x00, body=b""), WHOLE, 16, None),
            ("v2 longest", v2(extra=b"\x00" * (1024 - 12)), WHOLE, 16 + 1024, ("192.0.2.1", 5000)),
            ("v2 over 1024", v2(extra=b"\x00" * (1024 - 11)), BAD, 0, None),
            ("v2 TCP4 short", v2(body=b"\x00" * 11), BAD, 0, None),
            ("v2 version 3", v2(command=0x31), BAD, 0, None),
            ("v2 command 2", v2(command=0x22), BAD, 0, None),
            ("v2 partial signature", SIG[:7], PARTIAL, 0, None),
            ("v2 partial head", v2()[:14], PARTIAL, 0, None),
            ("v2 partial addresses", v2()[:27], PARTIAL, 0, None),
            ("v2 bad signature", SIG[:11] + b"X" + v2()[12:], BAD, 0, None),
        ]
        for name, data, what, length, address in cases:
            with self.subTest(name):
                self.assertEqual(proxy.parse(data), (what, length, address))


class ConsumeTest(unittest.TestCase):
    def pair(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        return a, b

    def test_tcp4_fast_path(self):
        # parse's one-match path for v1 TCP4 lines gives what parse_v1 gives
        rng = random.Random(24)
        octets = [b"0", b"1", b"9", b"10", b"99", b"100", b"199", b"200", b"249", b"250", b"255", b"256",
                  b"01", b"001", b"300", b"1000", b"", b"a"]
        ports = [b"0", b"1", b"80", b"00", b"01", b"65535", b"65536", b"99999", b"100000", b"", b"-1"]
        tails = [b"\r\n", b"\r\nGET / HTTP/1.1\r\n\r\n", b"\n", b" \r\n", b"\r"]
        fast = 0
        for _ in range(20000):
            quads = [b".".join(rng.choice(octets) for _ in range(4)) for _ in range(2)]
            line = b"PROXY TCP4 %s %s %s %s" % (quads[0], quads[1], rng.choice(ports), rng.choice(ports))
            buf = line + rng.choice(tails)
            fast += proxy.V1_TCP4.match(buf) is not None
            self.assertEqual(proxy.parse(buf), proxy.parse_v1(buf), buf)
        self.assertGreater(fast, 20)  # the fast path was taken

    def test_tcp4_seen_path(self):
        # a line whose addresses and destination port V1_TCP4 took before
        # (V1_SEEN, V1_PORTS) is taken by parse's first step, its source
        # port checked alone, with no call of parse_long: it gives what
        # parse_v1 gives
        rng = random.Random(20)
        quads = [b"192.0.2.1", b"203.0.113.7", b"10.0.0.255", b"1.2.3.04", b"256.1.1.1", b"0.0.0.0"]
        ports = [b"0", b"1", b"80", b"00", b"01", b"65535", b"65536", b"99999", b"100000", b"", b"-1", b"+1",
                 b"8 0", b"\xd9\xa5", b"1_0", b" 8"]
        tails = [b"\r\n", b"\r\nGET / HTTP/1.1\r\n\r\n", b"\n", b" \r\n", b"\r", b"\r\r\n"]
        proxy.V1_SEEN.clear()
        proxy.V1_PORTS.clear()
        long, calls = proxy.parse_long, []

        def counted(buf):
            calls.append(buf)
            return long(buf)
        first = 0
        with mock.patch.object(proxy, "parse_long", counted):
            for _ in range(20000):
                line = b"PROXY TCP4 %s %s %s %s" % (rng.choice(quads), rng.choice(quads), rng.choice(ports),
                                                    rng.choice(ports))
                buf = line + rng.choice(tails)
                before = len(calls)
                self.assertEqual(proxy.parse(buf), proxy.parse_v1(buf), buf)
                first += len(calls) == before
        self.assertGreater(first, 100)  # the first step took lines
        self.assertLessEqual(len(proxy.V1_SEEN), 16)  # the good address pairs alone
        self.assertLessEqual(proxy.V1_PORTS, {b"0\r", b"1\r", b"80\r", b"65535\r"})  # good destination ports alone

    def test_in_pieces(self):
        # the header comes a few bytes at a time; the request after it stays unread
        for name, header in [("v1", V1), ("v2", v2(extra=TLV))]:
            with self.subTest(name):
                client, conn = self.pair()

                def send():
                    for i in range(0, len(header), 5):
                        client.sendall(header[i:i + 5])
                        time.sleep(0.01)  # a header in pieces: the thing tested
                    client.sendall(b"GET / HTTP/1.1\r\n")
                sender = threading.Thread(target=send)
                sender.start()
                self.assertEqual(proxy.consume(conn, 5), ("192.0.2.1", 5000))
                sender.join(10)  # the request sent: in conn's queue (a socket pair)
                self.assertEqual(conn.recv(100, socket.MSG_DONTWAIT), b"GET / HTTP/1.1\r\n")

    def test_refused(self):
        cases = [("malformed", b"GET / HTTP/1.1\r\n\r\n", False), ("late", V1[:10], False),
                 ("closed", V1[:10], True)]
        for name, data, close in cases:
            with self.subTest(name):
                client, conn = self.pair()
                client.sendall(data)
                if close:
                    client.shutdown(socket.SHUT_WR)
                with self.assertRaises(proxy.BadHeader):
                    proxy.consume(conn, 0.2)


class TrustTest(unittest.TestCase):
    def test_from_text(self):
        trust = proxy.Trust.from_text("0=127.0.0.0/8 0=::1/128 1=10.0.0.0/8 2=192.0.2.7")
        cases = [
            (0, ("127.0.0.1", 1), True),
            (0, ("::1", 1, 0, 0), True),
            (0, ("::ffff:127.0.0.9", 1, 0, 0), True),  # IPv4-mapped: the IPv4 entries
            (0, ("10.0.0.1", 1), False),
            (1, ("10.2.3.4", 1), True),
            (1, ("127.0.0.1", 1), False),
            (2, ("192.0.2.7", 1), True),  # a bare address: /32
            (2, ("192.0.2.8", 1), False),
            (3, ("127.0.0.1", 1), False),  # a listener without entries
            (0, "/run/sock", False),  # a unix socket's peer
            (0, "", False),
        ]
        for _ in range(2):  # the answers, then the kept answers
            for index, addr, want in cases:
                with self.subTest(index=index, addr=addr):
                    self.assertEqual(trust.trusts(index, addr), want)
        self.assertNotIn((0, "/"), trust.seen)  # a unix socket's peer is never kept

    def test_bad(self):
        for text in ["127.0.0.1", "x=127.0.0.1", "0=300.0.0.1", "0=127.0.0.0/33"]:
            with self.subTest(text):
                with self.assertRaises(ValueError):
                    proxy.Trust.from_text(text)

    def test_proxy_for(self):
        cases = [({}, 6, False), ({"ACTD_PROXY_FROM": ""}, 6, False), ({"ACTD_PROXY_FROM": "0=127.0.0.1"}, 6, True),
                 ({"ACTD_PROXY_FROM": "0=127.0.0.1"}, 5, False)]
        for environ, revision, want in cases:
            with self.subTest(environ=environ, revision=revision):
                self.assertEqual(proxy_for(environ, revision) is not None, want)
        with self.assertRaises(SystemExit):
            proxy_for({"ACTD_PROXY_FROM": "bad"}, 6)

    def test_capabilities(self):
        self.assertEqual(capabilities(6, proxy=True), ch.HANDOFF | ch.PROXY)
        self.assertEqual(capabilities(5, proxy=True), ch.HANDOFF)
        self.assertEqual(capabilities(6), ch.HANDOFF)


class AddressTest(unittest.TestCase):
    def test_join_split(self):
        for host, port, text in [("192.0.2.1", 5000, b"192.0.2.1:5000"), ("2001:db8::1", 443, b"[2001:db8::1]:443"),
                                 ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535,
                                  b"[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")]:
            with self.subTest(text):
                self.assertEqual(proxy.join(host, port), text)
                self.assertEqual(proxy.split(text), (host, port))
                self.assertLessEqual(len(text), ch.MAX_ADDRESS)
        for bad in [b"192.0.2.1", b"2001:db8::1:80", b"[::1:80", b":80", b"h:x"]:
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    proxy.split(bad)


class TrailerTest(unittest.TestCase):
    """Address trailers on C, K, W and U, between the master and a worker
    that announced proxy."""

    def channel(self, proxy_on=True):
        m = Master(self, 6)
        m.channel.proxy = proxy_on
        return m

    def connection(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        return b

    def test_receive(self):
        U = ch.HEADER.pack(ch.UNSENT, 1, 0, 1) + ch.TRAILER.pack(3, 4)
        cases = [
            ("C with an address", ch.HEADER.pack(ch.CONNECTION, 1, 0, 0) + b"[2001:db8::1]:443", 1, ("2001:db8::1", 443)),
            ("C without", ch.HEADER.pack(ch.CONNECTION, 1, 0, 0), 1, None),
            ("U with an address", U + b"192.0.2.1:5000", 2, ("192.0.2.1", 5000)),
            ("U without", U, 2, None),
        ]
        for name, msg, count, want in cases:
            with self.subTest(name):
                m = self.channel()
                socket.send_fds(m.sock, [msg], [self.connection().fileno()] * count)
                kind, _, _, got = m.channel.receive_fd()
                self.assertEqual(kind, msg[:1])
                self.assertEqual(m.channel.address, want)
                ch.close_all(got[:2] if count == 2 else [got])

    def test_receive_refused(self):
        C = ch.HEADER.pack(ch.CONNECTION, 1, 0, 0)
        cases = [("not HOST:PORT", C + b"192.0.2.1", True), ("over 48 bytes", C + b"[" + b"1" * 45 + b"]:1", True),
                 ("proxy not announced", C + b"192.0.2.1:5000", False),
                 ("on A", ch.HEADER.pack(ch.ACCEPT, 1, 0, 0) + b"192.0.2.1:5000", True)]
        for name, msg, proxy_on in cases:
            with self.subTest(name):
                m = self.channel(proxy_on)
                fds = [self.connection().fileno()] if msg[:1] == ch.CONNECTION else []
                socket.send_fds(m.sock, [msg], fds)
                before = len(os.listdir("/proc/self/fd"))
                with self.assertRaises(ch.Garbage):
                    m.channel.receive_fd()
                self.assertEqual(len(os.listdir("/proc/self/fd")), before, "want the attached fd closed")

    def test_send(self):
        for proxy_on, want in [(True, b"[2001:db8::1]:443"), (False, b"")]:
            with self.subTest(proxy=proxy_on):
                m = self.channel(proxy_on)
                conn = self.connection()
                m.channel.send_fd(ch.KEEP, 0, conn.fileno(), ch.NOT_READY, ("2001:db8::1", 443))
                msg, fds, _, _ = socket.recv_fds(m.sock, 128, 2)
                self.assertEqual(msg, ch.HEADER.pack(ch.KEEP, 1, 0, ch.NOT_READY) + want)
                ch.close_all(fds)
                m.channel.send_write(0, True, conn.fileno(), conn.fileno(), 7, 9, ("192.0.2.1", 5000))
                msg, fds, _, _ = socket.recv_fds(m.sock, 128, 2)
                self.assertEqual(msg[ch.HEADER.size:], ch.TRAILER.pack(7, 9) + (b"192.0.2.1:5000" if proxy_on else b""))
                ch.close_all(fds)


class ForwardedTest(unittest.TestCase):
    def test_resolve(self):
        allowed = forwarded.networks("127.0.0.1, 10.0.0.0/8")
        cases = [
            ("off", [], ("127.0.0.1", "1"), {"X-FORWARDED-FOR": "1.2.3.4"}, ("127.0.0.1", "1", None)),
            ("not trusted", allowed, ("192.0.2.9", "1"), {"X-FORWARDED-FOR": "1.2.3.4", "X-FORWARDED-PROTO": "https"},
             ("192.0.2.9", "1", None)),
            ("trusted", allowed, ("127.0.0.1", "1"), {"X-FORWARDED-FOR": "1.2.3.4", "X-FORWARDED-PROTO": "https"},
             ("1.2.3.4", "", "https")),
            ("rightmost untrusted", allowed, ("127.0.0.1", "1"), {"X-FORWARDED-FOR": "6.6.6.6, 1.2.3.4, 10.1.1.1"},
             ("1.2.3.4", "", None)),
            ("all trusted: leftmost", allowed, ("127.0.0.1", "1"), {"X-FORWARDED-FOR": "10.2.2.2,10.1.1.1"},
             ("10.2.2.2", "", None)),
            ("no header", allowed, ("127.0.0.1", "1"), {}, ("127.0.0.1", "1", None)),
            ("odd proto", allowed, ("127.0.0.1", "1"), {"X-FORWARDED-PROTO": "gopher"}, ("127.0.0.1", "1", None)),
            ("last proto", allowed, ("127.0.0.1", "1"), {"X-FORWARDED-PROTO": "http, HTTPS"}, ("127.0.0.1", "1", "https")),
            ("unix socket", allowed, ("", ""), {"X-FORWARDED-FOR": "1.2.3.4"}, ("", "", None)),
        ]
        for name, allow, remote, headers, want in cases:
            with self.subTest(name):
                self.assertEqual(forwarded.resolve(allow, remote, headers), want)
        with self.assertRaises(ValueError):
            forwarded.networks("127.0.0.1,nonsense")


# A child whose application answers with REMOTE_ADDR:REMOTE_PORT and the
# scheme.
REMOTE_CHILD = r"""
import fcntl, os, sys
high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 100) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for i, fd in enumerate(high):
    os.dup2(fd, 3 + i)
    os.close(fd)
from actd.wsgi import Options, Server
from actd.worker import Worker
def app(environ, start_response):
    body = (environ["REMOTE_ADDR"] + " " + environ["REMOTE_PORT"]).encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]
server = Server(app, Options(keep_alive=5, timeout=5))
server.hooks = Worker(server.serve)
server.hooks.header_timeout = 2
server.hooks.run()
"""

TRUSTED = "0=127.0.0.0/8"


def answer(test, client):
    """Return what client reads until the server closes (or resets: it
    closed with bytes unread)."""
    got = b""
    while True:
        try:
            chunk = client.recv(4096)
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk


class ProxyChildTest(unittest.TestCase):
    def child(self, mode="exclusive", trusted=TRUSTED, revision=6):
        return Child(self, "http" if mode == "dispatch" else "", revision, REMOTE_CHILD, mode, ACTD_PROXY_FROM=trusted)

    def test_hello(self):
        for revision, want in [(6, ch.HANDOFF | ch.PROXY), (5, ch.HANDOFF)]:
            with self.subTest(revision=revision):
                self.assertEqual(self.child(revision=revision).started(), want)

    def test_exclusive(self):
        cases = [
            ("v1", [V1, CLOSE], b"192.0.2.1 5000"),
            ("v2 in pieces", [v2()[:10], v2()[10:] + CLOSE[:5], CLOSE[5:]], b"192.0.2.1 5000"),
            ("v2 LOCAL: the socket's address", [v2(command=0x20), CLOSE], b"127.0.0.1 "),
            ("malformed: closed unanswered", [CLOSE], b""),
            ("late: closed unanswered", [V1[:10]], b""),
        ]
        c = self.child()
        c.started()
        for name, parts, want in cases:
            with self.subTest(name):
                client = connect(self, c, b"")
                for part in parts:
                    client.sendall(part)
                    time.sleep(0.02)  # parts apart: the thing tested
                got = answer(self, client)
                if want:
                    self.assertTrue(got.startswith(b"HTTP/1.1 200 "), got)
                    self.assertIn(b"\r\n\r\n" + want, got)
                else:
                    self.assertEqual(got, want)

    def test_untrusted_sends_none(self):
        c = self.child(trusted="0=10.0.0.0/8")
        c.started()
        client = connect(self, c, V1 + CLOSE)
        self.assertTrue(answer(self, client).startswith(b"HTTP/1.1 400 "))  # a PROXY line is no request
        client = connect(self, c, CLOSE)
        self.assertIn(b"\r\n\r\n127.0.0.1 ", answer(self, client))

    def test_screening(self):
        cases = [
            # sent before the child looks; K's value and trailer; what the K'd socket holds
            ("header not whole: nothing read", V1[:20], b"", V1[:20]),
            ("header whole, request not", V1 + CLOSE[:10], b"192.0.2.1:5000", CLOSE[:10]),
            ("header whole, nothing after it: looked at again", V1, b"192.0.2.1:5000", None),
            ("v2 LOCAL, request not: the socket's address", v2(command=0x20) + CLOSE[:10], b"127.0.0.1:", CLOSE[:10]),
        ]
        for name, data, trailer, left in cases:
            with self.subTest(name):
                c = self.child("dispatch")
                client = connect(self, c, data)
                wait_arrived(self, client, c.listener)  # in before the child looks
                c.started()
                got = c.heard()
                self.assertEqual(got[:3], (ch.KEEP, 0, ch.NOT_READY))
                self.assertTrue(c.trailer.startswith(trailer) and (trailer or not c.trailer), c.trailer)
                back = socket.socket(fileno=got[3][0])
                self.addCleanup(back.close)
                if left is None:  # the header read, nothing left
                    with self.assertRaises(BlockingIOError):
                        back.recv(1000, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                    continue
                self.assertEqual(back.recv(1000, socket.MSG_PEEK | socket.MSG_DONTWAIT), left)

    def test_screening_served(self):
        c = self.child("dispatch")
        client = connect(self, c, v2(family=0x21) + b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        wait_arrived(self, client, c.listener)  # in before the child looks
        c.started()
        got = b""
        while b"443" not in got:
            got += client.recv(4096)
        self.assertIn(b"\r\n\r\n2001:db8::1 443", got)
        got = c.heard()  # parked, with its address
        self.assertEqual(got[:3], (ch.KEEP, 0, 0))
        self.assertEqual(c.trailer, b"[2001:db8::1]:443")
        os.close(got[3][0])

    def test_handed_over_with_address(self):
        c = self.child("dispatch")
        c.started()
        client, server = socket.socketpair()
        self.addCleanup(client.close)
        client.sendall(CLOSE)
        c.send(ch.CONNECTION, 0, 0, server.fileno(), b"[2001:db8::7]:9")
        server.close()
        self.assertIn(b"\r\n\r\n2001:db8::7 9", answer(self, client))


if __name__ == "__main__":
    unittest.main()
