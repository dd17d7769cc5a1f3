"""actd.accesslog: the format, the writers, and the server's lines."""

import os
import socket
import tempfile
import time
import unittest

from actd import accesslog, journal
from actd.accesslog import Entry, compile_format
from actd.wsgi import Options, Server
from helpers import Pair, parse_responses
from test_wsgi import echo, fails, streamed, stderr_captured


def entry(**kw):
    fields = dict(remote="192.0.2.7", method="GET", path="/a b", query="token=s3cret", protocol="HTTP/1.1",
                  status="200", sent=1234, micros=2500000, started=971185536.0,
                  headers={"REFERER": "http://r/", "USER-AGENT": 'curl "8"', "HOST": "h"})
    fields.update(kw)
    return Entry(**fields)


def restore_tz(saved):
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


class FormatTest(unittest.TestCase):
    def setUp(self):
        saved = os.environ.get("TZ")
        os.environ["TZ"] = "UTC"
        time.tzset()
        self.addCleanup(restore_tz, saved)

    def test_directives(self):
        cases = [
            ("%h %l %u", entry(), "192.0.2.7 - -"),
            ("%t", entry(), "[10/Oct/2000:13:45:36 +0000]"),
            ("%r", entry(), "GET /a b HTTP/1.1"),
            ("%m|%U|%q|%H", entry(), "GET|/a b|?token=s3cret|HTTP/1.1"),
            ("no query: %q.", entry(query=""), "no query: ."),
            ("%s %>s", entry(status="413"), "413 413"),
            ("%b %B", entry(), "1234 1234"),
            ("none sent: %b %B", entry(sent=0), "none sent: - 0"),
            ("%D %T", entry(), "2500000 2"),
            ("%{Referer}i %{user-agent}i %{X-None}i", entry(), 'http://r/ curl \\"8\\" -'),
            ("%P", entry(), str(os.getpid())),
            ("100%% %h", entry(), "100% 192.0.2.7"),
            ("no address: %h", entry(remote=""), "no address: -"),
            ("escaped", entry(path="/\x1b[31m\\"), ""),
            ("default", entry(), '192.0.2.7 - - [10/Oct/2000:13:45:36 +0000] "GET /a b HTTP/1.1" 200 1234 '
                                 '"http://r/" "curl \\"8\\"" 2500000'),
        ]
        for fmt, e, want in cases:
            with self.subTest(fmt):
                if fmt == "escaped":
                    self.assertEqual(compile_format("%U")(e), "/\\x1b[31m\\\\")
                    continue
                if fmt == "default":
                    fmt = accesslog.DEFAULT_FORMAT
                self.assertEqual(compile_format(fmt)(e), want)

    def test_local_time(self):
        os.environ["TZ"] = "PST8PDT"
        time.tzset()
        self.assertEqual(accesslog.clf_time(971185536.0), "[10/Oct/2000:06:45:36 -0700]")

    def test_unknown_directives(self):
        for fmt in ["%Z", "%{Foo}o", "50%", "%>", "%{Referer"]:
            with self.subTest(fmt):
                with self.assertRaises(ValueError):
                    compile_format(fmt)


class WriterTest(unittest.TestCase):
    def test_fd_writer(self):
        with tempfile.NamedTemporaryFile() as f:
            fd = os.open(f.name, os.O_WRONLY | os.O_APPEND)
            self.addCleanup(os.close, fd)
            log = accesslog.from_environ({"ACTD_ACCESS_LOG": f"fd:{fd}", "ACTD_ACCESS_LOG_FORMAT": "%m %U"})
            log.log(entry())
            log.log(entry(method="POST"))
            self.assertEqual(f.read(), b"GET /a b\nPOST /a b\n")

    def test_fd_writer_bad_fd(self):
        r, w = os.pipe()
        os.close(r)
        os.close(w)
        with stderr_captured() as err:
            accesslog.FdWriter(w)("line", entry())
        self.assertIn(f"access log fd {w}", err.getvalue())

    def test_journal(self):
        path = os.path.join(tempfile.mkdtemp(), "journal.socket")
        fake = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(fake.close)
        fake.bind(path)
        native = journal.Native.connect(path)
        self.addCleanup(native.sock.close)
        log = accesslog.AccessLog(compile_format("%r %>s"), accesslog.JournalWriter(native))
        log.log(entry())
        got = dict(line.split(b"=", 1) for line in fake.recv(65536).rstrip(b"\n").split(b"\n"))
        self.assertEqual(got, {
            b"MESSAGE": b"GET /a b HTTP/1.1 200", b"PRIORITY": b"6", b"SYSLOG_IDENTIFIER": b"actd",
            b"HTTP_STATUS": b"200", b"HTTP_METHOD": b"GET", b"HTTP_PATH": b"/a b", b"HTTP_BYTES": b"1234",
            b"HTTP_DURATION_US": b"2500000", b"REMOTE_ADDR": b"192.0.2.7"})

    def test_journal_gone(self):
        # no journal socket: the line goes to stderr
        with stderr_captured() as err:
            self.assertIsNone(journal.Native.connect("/nonexistent/socket"))
            native = journal.Native(socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))  # not connected
            accesslog.JournalWriter(native)("the line", entry())
            native.sock.close()
        self.assertEqual(err.getvalue(), "the line\n")

    def test_encode_newline(self):
        self.assertEqual(journal.encode([("A", "x"), ("B", "1\n2")]),
                         b"A=x\nB\n\x03\x00\x00\x00\x00\x00\x00\x001\n2\n")

    def test_from_environ(self):
        cases = [({}, False), ({"ACTD_ACCESS_LOG": "off"}, False), ({"ACTD_ACCESS_LOG": "fd:x"}, False),
                 ({"ACTD_ACCESS_LOG": "/var/log/a.log"}, False),
                 ({"ACTD_ACCESS_LOG": "fd:2"}, True), ({"ACTD_ACCESS_LOG": "journal"}, True)]
        for environ, want in cases:
            with self.subTest(environ), stderr_captured():
                self.assertEqual(accesslog.from_environ(environ) is not None, want)
        with self.assertRaises(ValueError):
            accesslog.from_environ({"ACTD_ACCESS_LOG": "fd:2", "ACTD_ACCESS_LOG_FORMAT": "%Z"})


class Lines(list):
    """An access log writer that keeps (line, entry)."""

    def __call__(self, line, e):
        self.append((line, e))


class ServerLogTest(unittest.TestCase):
    def serve(self, app, data, **options):
        lines = Lines()
        pair = Pair(app, Options(keep_alive=2, timeout=5, **options))
        pair.server.access_log = accesslog.AccessLog(compile_format("%h %r %>s %b"), lines)
        with stderr_captured():
            raw = pair.exchange(data)
        return lines, raw

    def test_lines(self):
        cases = [
            ("query left out", echo, b"GET /p?token=s3cret HTTP/1.1\r\nHost: h\r\n\r\n", {},
             ["127.0.0.1 GET /p HTTP/1.1 200 20"]),
            ("chunked bytes", streamed, b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n", {}, ["127.0.0.1 GET /s HTTP/1.1 200 7"]),
            ("head", echo, b"HEAD /h HTTP/1.1\r\nHost: h\r\n\r\n", {}, ["127.0.0.1 HEAD /h HTTP/1.1 200 -"]),
            ("500", fails, b"GET /boom?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", {}, ["127.0.0.1 GET /boom HTTP/1.1 500 22"]),
            ("413", echo, b"POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 99\r\n\r\n", {"max_body": 10},
             ["127.0.0.1 POST /big HTTP/1.1 413 18"]),
            ("pipelined", echo, b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n", {},
             ["127.0.0.1 GET /1 HTTP/1.1 200 8", "127.0.0.1 GET /2 HTTP/1.1 200 8"]),
            ("bad request: not logged", echo, b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", {}, []),
        ]
        for name, app, data, options, want in cases:
            with self.subTest(name):
                lines, raw = self.serve(app, data, **options)
                self.assertEqual([line for line, _ in lines], want, raw)

    def test_duration(self):
        def slow(environ, start_response):
            start_response("200 OK", [])
            yield b"a"
            time.sleep(0.05)  # inside the body's iteration: counted
            yield b"b"

        lines, _ = self.serve(slow, b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        self.assertGreaterEqual(lines[0][1].micros, 50000)
        self.assertEqual(lines[0][1].sent, 2)

    def test_no_log(self):
        # without an access log, nothing is measured
        server = Server(echo)
        self.assertIsNone(server.access_log)


if __name__ == "__main__":
    unittest.main()
