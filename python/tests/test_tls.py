"""TLS on a listener (revision 6): actd.tls's ClientHello rule, and a
worker run as a real process that terminates TLS with a certificate it
reads from a memfd, as the master passes it (ACTD_TLS), against a test
that plays its master. Skipped without openssl(1), which makes the
self-signed certificate."""

import fcntl
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import unittest
import warnings

from actd import channel as ch
from actd import tls
from actd.worker import capabilities, tls_for
from helpers import wait_arrived
from test_screen import Child, connect

# A child whose application answers with the scheme and the path.
TLS_CHILD = r"""
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
    body = (environ["wsgi.url_scheme"] + " " + environ["PATH_INFO"] + " " + environ["REMOTE_ADDR"]).encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]
server = Server(app, Options(keep_alive=5, timeout=5))
server.hooks = Worker(server.serve)
server.hooks.run()
"""


def make_pem(test):
    """Return a self-signed certificate and its key, PEM, for localhost."""
    if shutil.which("openssl") is None:
        test.skipTest("openssl not found (Debian package openssl): it makes the test's certificate")
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    with open(cert, "rb") as c, open(key, "rb") as k:
        return c.read(), k.read(), cert


def memfd(test, pem):
    """Return a memfd holding pem, at fd 50 or above (clear of the fds the
    child program moves), as the master passes it."""
    fd = os.memfd_create("actd-tls", 0)
    os.write(fd, pem)
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 50)
    os.close(fd)
    test.addCleanup(os.close, high)
    return high


def client_context(cafile, **kw):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    for name, value in kw.items():
        setattr(ctx, name, value)
    return ctx


REQUEST = b"GET /%s HTTP/1.1\r\nHost: localhost\r\n\r\n"


def read_response(client, want):
    got = b""
    while not got.endswith(want):
        chunk = client.recv(4096)
        if not chunk:
            break
        got += chunk
    return got


class HelloReadyTest(unittest.TestCase):
    def test_rule(self):
        body = b"\x03\x03" + b"r" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"  # a ClientHello's start
        hello = bytes([tls.CLIENT_HELLO]) + len(body).to_bytes(3, "big") + body
        record = bytes([tls.HANDSHAKE, 3, 1]) + len(hello).to_bytes(2, "big") + hello
        split = (bytes([tls.HANDSHAKE, 3, 1]) + (10).to_bytes(2, "big") + hello[:10]
                 + bytes([tls.HANDSHAKE, 3, 1]) + (len(hello) - 10).to_bytes(2, "big") + hello[10:])
        cases = [
            ("nothing", b"", False),
            ("whole", record, True),
            ("whole, more after", record + b"\x14\x03\x03", True),
            ("record header cut", record[:3], False),
            ("message cut", record[:-1], False),
            ("over two records", split, True),
            ("over two records, second cut", split[:-1], False),
            ("first record only", split[:15], False),
            ("plain HTTP", b"GET / HTTP/1.1\r\n", True),
            ("not a ClientHello", bytes([tls.HANDSHAKE, 3, 1, 0, 4, 2, 0, 0, 0]), True),
            ("a full peek", bytes([tls.HANDSHAKE, 3, 1, 0xff, 0xff]) + b"x" * 100, True),
        ]
        for name, peek, want in cases:
            with self.subTest(name):
                self.assertEqual(tls.hello_ready(peek, 100 if name == "a full peek" else 32768), want)

    def test_real_hello(self):
        # what Python's own client sends, cut at every 50 bytes
        outgoing = ssl.MemoryBIO()
        client = ssl.create_default_context().wrap_bio(ssl.MemoryBIO(), outgoing, server_hostname="x")
        with self.assertRaises(ssl.SSLWantReadError):
            client.do_handshake()
        hello = outgoing.read()
        for cut in range(0, len(hello), 50):
            self.assertFalse(tls.hello_ready(hello[:cut], 32768), cut)
        self.assertTrue(tls.hello_ready(hello, 32768))


class TLSChildTest(unittest.TestCase):
    def child(self, mode="exclusive", revision=6):
        cert, key, self.cafile = make_pem(self)
        fd = memfd(self, cert + key)
        filter = "http" if mode == "dispatch" else ""
        return Child(self, filter, revision, TLS_CHILD, mode, pass_fds=[fd], ACTD_TLS=f"0={fd}")

    def tls_client(self, c, start=None, **kw):
        """Return a TLS client of c's listener; with start, its ClientHello
        is sent first, then start() runs, then the handshake ends."""
        raw = socket.create_connection(c.listener.getsockname())
        raw.settimeout(10)
        client = client_context(self.cafile, **kw).wrap_socket(raw, server_hostname="localhost",
                                                               do_handshake_on_connect=start is None)
        self.addCleanup(client.close)
        if start is not None:
            client.setblocking(False)
            with self.assertRaises(ssl.SSLWantReadError):
                client.do_handshake()
            wait_arrived(self, client, c.listener)  # the ClientHello in before start
            start()
            client.settimeout(10)
            client.do_handshake()
        return client

    def test_hello(self):
        for revision, want in [(6, ch.HANDOFF | ch.TLS), (5, ch.HANDOFF)]:
            with self.subTest(revision=revision):
                self.assertEqual(self.child(revision=revision).started(), want)

    def test_exclusive(self):
        c = self.child()
        c.started()
        client = self.tls_client(c)
        self.assertEqual(client.selected_alpn_protocol(), "http/1.1")
        self.assertGreaterEqual(client.version(), "TLSv1.2")
        for path in [b"one", b"two"]:  # keep-alive: both on one connection
            client.sendall(REQUEST % path)
            got = read_response(client, b"https /" + path + b" 127.0.0.1")
            self.assertTrue(got.startswith(b"HTTP/1.1 200 "), got)

    def test_refused(self):
        c = self.child()
        c.started()
        with self.subTest("plain HTTP: closed unanswered"):
            plain = connect(self, c, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                got = plain.recv(4096)
            except ConnectionResetError:
                got = b""
            self.assertNotIn(b"HTTP/1.1", got)
        with self.subTest("TLS 1.1"), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TLSv1 and TLSv1_1 are
            with self.assertRaises((ssl.SSLError, OSError)):
                self.tls_client(c, minimum_version=ssl.TLSVersion.TLSv1, maximum_version=ssl.TLSVersion.TLSv1_1)
        with self.subTest("served on after"):
            client = self.tls_client(c)
            client.sendall(REQUEST % b"after")
            self.assertIn(b"https /after", read_response(client, b"https /after 127.0.0.1"))

    def test_screening_never_gives_back(self):
        # under a filter: ready by the ClientHello; kept by the child
        # between requests (no K), even when the next one is slow to come
        c = self.child("dispatch")
        client = self.tls_client(c, c.started)  # the hello in before the child looks
        client.sendall(REQUEST % b"one")
        read_response(client, b"https /one 127.0.0.1")
        time.sleep(0.1)  # the next request slow to come: the thing tested
        client.sendall(REQUEST % b"two")
        read_response(client, b"https /two 127.0.0.1")
        client.close()
        heard = []
        while True:
            got = c.heard(1)
            if got is None:
                break
            heard.append(got[0])
            for fd in got[3]:
                os.close(fd)
        self.assertNotIn(ch.KEEP, heard)
        self.assertNotIn(ch.WRITE, heard)

    def test_screening_hello_late(self):
        # nothing yet when the child looks: K, not ready; the master hands
        # it over (C) once the hello is whole, and the child handshakes
        c = self.child("dispatch")
        raw = connect(self, c, b"")
        c.started()
        got = c.heard()
        self.assertEqual(got[:3], (ch.KEEP, 0, ch.NOT_READY))
        c.send(ch.CONNECTION, 0, 0, got[3][0])
        os.close(got[3][0])
        client = client_context(self.cafile).wrap_socket(raw, server_hostname="localhost")
        client.sendall(REQUEST % b"late")
        self.assertIn(b"https /late 127.0.0.1", read_response(client, b"https /late 127.0.0.1"))
        c.expect(ch.BUSY)

    def test_tls_for(self):
        cert, key, _ = make_pem(self)
        good = memfd(self, cert + key)
        bad = memfd(self, cert)  # no key
        self.assertEqual(list(tls_for({"ACTD_TLS": f"0={good}"}, 6)), [0])
        self.assertEqual(tls_for({"ACTD_TLS": f"0={good}"}, 5), {})
        self.assertEqual(tls_for({}, 6), {})
        for text in [f"0={bad}", "0", "x=1", "0=9999"]:
            with self.subTest(text):
                with self.assertRaises(SystemExit):
                    tls_for({"ACTD_TLS": text}, 6)
        self.assertEqual(capabilities(6, tls=True), ch.HANDOFF | ch.TLS)


if __name__ == "__main__":
    unittest.main()
