"""The WSGI server, over a socket pair: actd.wsgi and actd.response.

Every application runs wrapped in wsgiref.validate, which fails the
request (500, logged) when the server breaks PEP 3333.
"""

import contextlib
import io
import os
import socket
import sys
import tempfile
import unittest
import warnings
from wsgiref.validate import validator

from actd import journal as actd_journal
from actd import response, wsgi
from actd.wsgi import Options, load
from helpers import Pair, exchange, fails, parse_native, parse_responses, replaced, with_write


def echo(environ, start_response):
    """Answers with the method, path, query and the body it read."""
    body = environ["wsgi.input"].read(1 << 20)  # to its end: wsgi.input_terminated
    out = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']} {environ['QUERY_STRING']} ".encode() + body
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(out)))])
    return [out]


def streamed(environ, start_response):
    """A generator without Content-Length."""
    start_response("200 OK", [("Content-Type", "text/plain")])
    return (part for part in [b"one ", b"", b"two"])


def by_lines(environ, start_response):
    lines = [line for line in environ["wsgi.input"]]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"%d lines: " % len(lines), b"|".join(lines)]


def fails_late(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"first part "
    raise RuntimeError("broke after the response began")


def ignores_body(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


class Closing:
    closed = 0

    def __init__(self, environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

    def __iter__(self):
        yield b"closing"

    def close(self):
        Closing.closed += 1


def files(path):
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        if environ["PATH_INFO"] == "/real":
            return environ["wsgi.file_wrapper"](open(path, "rb"), 4096)
        return environ["wsgi.file_wrapper"](io.BytesIO(b"from memory"), 4)
    return app


def validated(app):
    return validator(app)


@contextlib.contextmanager
def stderr_captured():
    old, sys.stderr = sys.stderr, io.StringIO()
    try:
        yield sys.stderr
    finally:
        sys.stderr = old


class ServerTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("error")  # wsgiref.validate warns of some faults
        self.addCleanup(warnings.resetwarnings)

    def one(self, app, data, method="GET"):
        got = parse_responses(exchange(validated(app), data), [method])
        self.assertEqual(len(got), 1, got)
        return got[0]

    def test_requests(self):
        cases = [
            ("GET", echo, b"GET /p?q=1 HTTP/1.1\r\nHost: h\r\n\r\n", 200, b"GET /p q=1 "),
            ("HTTP/1.0", echo, b"GET /p HTTP/1.0\r\n\r\n", 200, b"GET /p  "),
            ("POST length", echo, b"POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 200, b"POST /f  hello"),
            ("POST chunked", echo, b"POST /f HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
             200, b"POST /f  hello"),
            ("input lines", by_lines, b"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\na\nb\nc\n", 200, b"3 lines: a\n|b\n|c\n"),
            ("streamed 1.1", streamed, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", 200, b"one two"),
            ("streamed 1.0", streamed, b"GET / HTTP/1.0\r\n\r\n", 200, b"one two"),
            ("write callable", with_write, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", 200, b"written returned"),
            ("exc_info replaces", replaced, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", 503, b"replaced"),
            ("percent path", echo, b"GET /a%20b HTTP/1.1\r\nHost: h\r\n\r\n", 200, b"GET /a b  "),
        ]
        for name, app, data, status, body in cases:
            with self.subTest(name):
                got = self.one(app, data)
                self.assertEqual(got[0], status, got)
                self.assertEqual(got[2], body)

    def test_framing(self):
        cases = [
            ("list gets a length", echo, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "content-length", None),
            ("generator 1.1 chunked", streamed, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "transfer-encoding", "chunked"),
            ("generator 1.0 closes", streamed, b"GET / HTTP/1.0\r\n\r\n", "connection", "close"),
            ("1.0 keep-alive", echo, b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "connection", "keep-alive"),
        ]
        for name, app, data, header, value in cases:
            with self.subTest(name):
                _, headers, _ = self.one(app, data)
                self.assertIn(header, headers)
                if value is not None:
                    self.assertEqual(headers[header], value)
                self.assertIn("date", headers)

    def test_head(self):
        raw = exchange(validated(echo), b"HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /g HTTP/1.1\r\nHost: h\r\n\r\n")
        got = parse_responses(raw, ["HEAD", "GET"])
        self.assertEqual([(s, b) for s, _, b in got], [(200, b""), (200, b"GET /g  ")])
        self.assertEqual(got[0][1]["content-length"], "9")  # of "HEAD /h  "

    def test_pipelined(self):
        data = (b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                b"POST /3 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
                b"GET /4 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\nHost: h\r\n\r\n")
        got = parse_responses(exchange(validated(echo), data))
        self.assertEqual([b for _, _, b in got], [b"GET /1  ", b"POST /2  abc", b"POST /3  x", b"GET /4  "])
        self.assertEqual(got[-1][1]["connection"], "close")

    def test_unread_body_is_skipped(self):
        data = (b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
                b"POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n")
        got = parse_responses(exchange(validated(ignores_body), data))
        self.assertEqual([b for _, _, b in got], [b"ok", b"ok", b"ok"])

    def test_expect_continue(self):
        pair = Pair(validated(echo))
        pair.client.sendall(b"POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        self.assertEqual(pair.client.recv(100), b"HTTP/1.1 100 Continue\r\n\r\n")
        got = parse_responses(pair.exchange(b"body"))
        self.assertEqual(got[0][2], b"POST /e  body")

    def test_expect_continue_body_begun(self):
        # The body came (the master held it, and may have sent 100 itself):
        # no 100 from the adapter.
        data = b"POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\nbody"
        raw = exchange(validated(echo), data)
        self.assertNotIn(b"100 Continue", raw)
        self.assertEqual(parse_responses(raw)[0][2], b"POST /e  body")

    def test_expect_continue_unread_closes(self):
        data = b"POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
        raw = exchange(validated(ignores_body), data)
        self.assertNotIn(b"100 Continue", raw)
        got = parse_responses(raw)
        self.assertEqual(got[0][0], 200)

    def test_close_is_called(self):
        Closing.closed = 0
        got = self.one(Closing, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(got[2], b"closing")
        self.assertEqual(Closing.closed, 1)

    def test_file_wrapper(self):
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(b"0123456789" * 1000)
        self.addCleanup(os.unlink, f.name)
        app = files(f.name)
        for path, want in [("/real", b"0123456789" * 1000), ("/memory", b"from memory")]:
            with self.subTest(path):
                got = self.one(app, f"GET {path} HTTP/1.1\r\nHost: h\r\n\r\n".encode())
                self.assertEqual(got[2], want)

    def test_app_errors(self):
        with stderr_captured() as err:
            got = self.one(fails, b"GET /boom?token=s3cret HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(got[0], 500)
        self.assertIn("GET /boom", err.getvalue())
        self.assertNotIn("s3cret", err.getvalue())  # the query may carry tokens
        self.assertIn("RuntimeError: the application broke", err.getvalue())
        self.assertIn("Traceback", err.getvalue())

    def app_error_on_journal_stream(self, socket_path):
        """Serve fails with stderr the journal's stream (JOURNAL_STREAM
        names it) and the native socket at socket_path; returns the status
        and what stderr got."""
        with tempfile.TemporaryFile("w+") as stream:
            st = os.fstat(stream.fileno())
            saved = sys.stderr, os.environ.get("JOURNAL_STREAM"), actd_journal.SOCKET
            sys.stderr, os.environ["JOURNAL_STREAM"] = stream, f"{st.st_dev}:{st.st_ino}"
            actd_journal.SOCKET = socket_path
            try:
                got = self.one(fails, b"GET /boom?token=s3cret HTTP/1.1\r\nHost: h\r\n\r\n")
            finally:
                sys.stderr, actd_journal.SOCKET = saved[0], saved[2]
                if saved[1] is None:
                    del os.environ["JOURNAL_STREAM"]
                else:
                    os.environ["JOURNAL_STREAM"] = saved[1]
            stream.seek(0)
            return got[0], stream.read()

    def test_app_error_one_journal_entry(self):
        # stderr is the journal's stream and its native socket answers:
        # the traceback is one entry at priority err, nothing on stderr
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "socket")
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as journal:
                journal.bind(path)
                status, err = self.app_error_on_journal_stream(path)
                journal.settimeout(5)
                entry = journal.recv(1 << 16)
        self.assertEqual((status, err), (500, ""))
        fields = parse_native(entry)
        self.assertEqual(fields["PRIORITY"], "3")
        self.assertEqual((fields["HTTP_METHOD"], fields["HTTP_PATH"]), ("GET", "/boom"))
        self.assertIn("serving GET /boom", fields["MESSAGE"])
        self.assertIn("Traceback", fields["MESSAGE"])
        self.assertIn("RuntimeError: the application broke", fields["MESSAGE"])
        self.assertNotIn(b"s3cret", entry)  # the query may carry tokens

    def test_app_error_priority_in_the_journal(self):
        # stderr is the journal's stream but its native socket is gone:
        # every line of the traceback is an entry at priority err (<3>)
        with tempfile.TemporaryDirectory() as tmp:
            status, err = self.app_error_on_journal_stream(os.path.join(tmp, "none"))
        lines = err.splitlines()
        self.assertEqual(status, 500)
        self.assertGreater(len(lines), 3)
        self.assertEqual([l for l in lines if not l.startswith("<3>")], [])
        self.assertIn("<3>RuntimeError: the application broke", lines)

    def test_app_error_after_start_closes(self):
        with stderr_captured() as err:
            raw = exchange(streamed_then(fails_late), b"GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertIn(b"first part ", raw)
        self.assertNotIn(b"0\r\n\r\n", raw)  # no last chunk: the client sees the response cut
        self.assertIn("broke after the response began", err.getvalue())

    def test_malformed(self):
        cases = [
            ("garbage", b"\x16\x03\x01\x00 hello\r\n\r\n", 400),
            ("bad header", b"GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n", 400),
            ("smuggling", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("bad chunk", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", 400),
            ("long line", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: h\r\n\r\n", 414),
            ("large head", b"GET / HTTP/1.1\r\nHost: h\r\nX: " + b"a" * 40000 + b"\r\n\r\n", 431),
            ("head just over 32 KiB", b"GET / HTTP/1.1\r\nHost: h\r\nX: " + b"a" * (32768 - 31) + b"\r\n\r\n", 431),
            ("101 fields", b"GET / HTTP/1.1\r\nHost: h\r\n" + b"X: 1\r\n" * 100 + b"\r\n", 431),
            ("HTTP/2", b"GET / HTTP/2.0\r\n\r\n", 505),
            ("gzip body", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ]
        for name, data, status in cases:
            with self.subTest(name), stderr_captured():
                got = parse_responses(exchange(validated(echo), data + b"GET /next HTTP/1.1\r\nHost: h\r\n\r\n"))
                self.assertEqual([s for s, _, _ in got], [status])
                self.assertEqual(got[0][1]["connection"], "close")

    def test_body_limit(self):
        calls = []

        def counted(environ, start_response):
            calls.append(environ["PATH_INFO"])
            return echo(environ, start_response)

        def forgiving(environ, start_response):  # swallows the 413 and answers
            try:
                environ["wsgi.input"].read(100)
            except Exception:
                pass
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"forgave"]

        next_one = b"GET /next HTTP/1.1\r\nHost: h\r\n\r\n"
        chunked = b"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        cases = [
            ("length at the limit", counted, b"POST /l HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789",
             [(200, b"POST /l  0123456789"), (200, b"GET /next  ")], ["/l", "/next"]),
            ("length over", counted, b"POST /l HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n0123456789a",
             [(413, b"Content Too Large\n")], []),
            ("chunked at the limit", counted, chunked + b"5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n",
             [(200, b"POST /c  0123456789"), (200, b"GET /next  ")], ["/c", "/next"]),
            ("chunked grows over", counted, chunked + b"5\r\n01234\r\n6\r\n56789a\r\n0\r\n\r\n",
             [(413, b"Content Too Large\n")], ["/c"]),
            ("chunked over, swallowed", forgiving, chunked + b"b\r\n0123456789a\r\n0\r\n\r\n",
             [(200, b"forgave")], []),
        ]
        for name, app, data, want, called in cases:
            with self.subTest(name), stderr_captured():
                calls.clear()
                raw = exchange(validated(app), data + next_one, Options(keep_alive=2, timeout=5, max_body=10))
                got = parse_responses(raw)
                self.assertEqual([(s, b) for s, _, b in got], want)
                self.assertEqual(calls, called)
                if want[0][0] == 413 or app is forgiving:
                    self.assertEqual(got[-1][1]["connection"], "close")

    def test_head_limits_at_the_edge(self):
        # 32 KiB of head and 100 fields are served; one byte or field more is 431 (test_malformed)
        for name, head in [("32768 bytes", b"GET / HTTP/1.1\r\nHost: h\r\nX: " + b"a" * (32768 - 32) + b"\r\n\r\n"),
                           ("100 fields", b"GET / HTTP/1.1\r\nHost: h\r\n" + b"X: 1\r\n" * 99 + b"\r\n")]:
            with self.subTest(name):
                self.assertEqual(self.one(echo, head)[0], 200)

    def test_body_limit_unread(self):
        # The 413 comes at once: the body is neither awaited nor read.
        pair = Pair(validated(echo), Options(keep_alive=2, timeout=5, max_body=10))
        with stderr_captured() as err:  # before the request: the server logs as soon as it reads it
            pair.client.sendall(b"PUT /big HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n"
                                b"Expect: 100-continue\r\n\r\n")
            raw = pair.read_all()
        self.assertEqual([s for s, _, _ in parse_responses(raw)], [413])
        self.assertNotIn(b"100 Continue", raw)
        self.assertIn("Content-Length 1000000 over 10", err.getvalue())

    def test_max_body_environ(self):
        cases = [({}, None), ({"ACTD_MAX_REQUEST_BODY": "0"}, None), ({"ACTD_MAX_REQUEST_BODY": "1073741824"}, 1 << 30),
                 ({"ACTD_MAX_REQUEST_BODY": "1G"}, None), ({"ACTD_MAX_REQUEST_BODY": "-1"}, None)]
        for environ, want in cases:
            with self.subTest(environ), stderr_captured():
                self.assertEqual(wsgi.max_body(environ), want)

    def test_environ(self):
        seen = {}

        def app(environ, start_response):
            seen.update(environ)
            return echo(environ, start_response)

        data = (b"POST /x?y=1 HTTP/1.1\r\nHost: example.org\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n"
                b"X-Forwarded-For: 10.0.0.1\r\nX_Forwarded_For: spoof\r\n\r\nz")
        self.one(app, data)
        want = {"REQUEST_METHOD": "POST", "PATH_INFO": "/x", "QUERY_STRING": "y=1", "SCRIPT_NAME": "",
                "CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": "1", "HTTP_HOST": "example.org",
                "HTTP_X_FORWARDED_FOR": "10.0.0.1", "SERVER_NAME": "localhost", "SERVER_PORT": "80",
                "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "4321", "SERVER_PROTOCOL": "HTTP/1.1",
                "wsgi.url_scheme": "http", "wsgi.multiprocess": True, "wsgi.multithread": False}
        for key, value in want.items():
            with self.subTest(key):
                self.assertEqual(seen.get(key), value)
        self.assertNotIn("HTTP_CONTENT_TYPE", seen)

    def test_environ_of_a_head_again(self):
        # a head that comes again (its Request and environ keys kept) gets
        # the environ it got the first time, whatever the application did
        # to that one; responses alike but for their length are framed each
        seen = []

        def app(environ, start_response):
            seen.append(dict(environ))
            environ["PATH_INFO"], environ["HTTP_X_ONE"], environ["X_ADDED"] = "/changed", "2", "x"
            body = b"x" * len(seen)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [body]

        head = b"GET /a HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\n"
        got = parse_responses(exchange(app, head * 3 + head.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")))
        self.assertEqual([(s, h.get("content-length"), h.get("connection"), b) for s, h, b in got],
                         [(200, "1", None, b"x"), (200, "2", None, b"xx"), (200, "3", None, b"xxx"),
                          (200, "4", "close", b"xxxx")])
        self.assertEqual(seen[1], seen[0])
        self.assertEqual(seen[2], seen[0])
        self.assertEqual((seen[0]["PATH_INFO"], seen[0]["HTTP_X_ONE"], "X_ADDED" in seen[0]), ("/a", "1", False))

    def test_heads_built_once(self):
        # a response head is kept for the next like it, but one setting a
        # cookie; one that cannot be built is answered as before it was kept
        def app_with(headers):
            def app(environ, start_response):
                start_response("200 OK", headers)
                return [b"ok"]
            return app

        cases = [
            ("plain", [("Content-Type", "text/plain")], 200, True),
            ("cookie", [("Set-Cookie", "s=secret-head-test")], 200, False),
            ("bad Content-Length", [("Content-Length", "abc")], 500, False),
            ("not latin-1", [("X-Name", "\u0100")], None, False),
        ]
        for name, headers, status, kept in cases:
            with self.subTest(name):
                response.HEADS.clear()
                got = parse_responses(exchange(app_with(headers), b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
                self.assertEqual([s for s, _, _ in got], [status] if status else [])
                self.assertEqual(any(headers == list(key[6:]) for key in response.HEADS), kept)

    def test_environ_per_request(self):
        seen = []

        def app(environ, start_response):
            seen.append(dict(environ))
            return echo(environ, start_response)

        data = (b"GET /a HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\n"
                b"GET /b?c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        got = parse_responses(exchange(validated(app), data))
        self.assertEqual(len(got), 2, got)
        first, second = seen
        self.assertEqual((first["SERVER_PROTOCOL"], first["PATH_INFO"], first["HTTP_X_ONE"]),
                         ("HTTP/1.1", "/a", "1"))
        self.assertEqual((second["SERVER_PROTOCOL"], second["PATH_INFO"], second["QUERY_STRING"]),
                         ("HTTP/1.0", "/b", "c"))
        self.assertNotIn("HTTP_X_ONE", second)  # the template is copied, never filled
        self.assertNotIn("HTTP_HOST", second)

    def test_hop_by_hop_from_app(self):
        def app(environ, start_response):
            start_response("200 OK", [("content-length", "2"), ("Keep-Alive", "timeout=9"),
                                      ("X-Kept", "y"), ("connection", "Close")])
            return [b"ok", b"!"]

        raw = exchange(app, b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n")
        got = parse_responses(raw)
        self.assertEqual(len(got), 1, got)  # the application's Connection: close ends it
        _, headers, body = got[0]
        self.assertEqual((headers.get("connection"), headers.get("x-kept"), body), ("close", "y", b"ok"))
        self.assertNotIn("keep-alive", headers)
        self.assertEqual(raw.count(b"onnection:"), 1, raw)  # its own is dropped

    def test_check_headers(self):
        good = [("Content-Type", "text/plain"), ("X-A", "b: c"), ("X-Empty", "")]
        self.assertIs(response.check_headers(good), good)
        bad = [
            ("not a list", (("X-A", "b"),)),
            ("not a tuple", [["X-A", "b"]]),
            ("three items", [("X-A", "b", "c")]),
            ("bytes value", [("X-A", b"b")]),
            ("colon in name", [("X:A", "b")]),
            ("CR in name", [("X\rA", "b")]),
            ("LF in value", [("X-A", "b\nSet-Cookie: x")]),
            ("CR in value", [("X-A", "b\r")]),
            ("NUL in value", [("X-A", "b\0")]),
        ]
        for name, headers in bad:
            with self.subTest(name):
                with self.assertRaises(AssertionError):
                    response.check_headers(headers)

    def test_check_headers_remembered(self):
        # a header found good is remembered; a bad one is refused however often it comes,
        # and the good ones kept are bounded
        good = [("X-Seen", "ok"), ("Content-Type", "text/plain")]
        for _ in range(2):
            self.assertIs(response.check_headers(good), good)
        self.assertIn(("X-Seen", "ok"), response.GOOD_HEADERS)
        for headers in ([("X-Seen", "ok\r\nX-B: c")], [("X-Seen:", "ok")], [("X-Seen", ["ok"])],
                        [["X-Seen", "ok"]], [("X-Seen", "ok"), ("X-Seen", b"ok")]):
            for _ in range(2):
                with self.subTest(headers=headers), self.assertRaises(AssertionError):
                    response.check_headers(headers)
        self.assertNotIn(("X-Seen", "ok\r\nX-B: c"), response.GOOD_HEADERS)
        for i in range(2 * response.CHECKED_LIMIT):
            response.check_headers([("X-N", str(i))])
            response.check_status(f"{200 + i % 800} S{i}")
        self.assertLessEqual(len(response.GOOD_HEADERS), response.CHECKED_LIMIT)
        self.assertLessEqual(len(response.GOOD_STATUSES), response.CHECKED_LIMIT)
        with self.assertRaises(AssertionError):
            response.check_status("200 OK\r\nX: y")

    def test_bodiless_input(self):
        # a request without a body reads an empty wsgi.input, whichever way it is read
        def reads(environ, start_response):
            body = environ["wsgi.input"]
            got = [body.read(), body.read(10), body.readline(), body.readlines(), list(body)]
            out = repr(got).encode()
            start_response("200 OK", [("Content-Length", str(len(out)))])
            return [out]
        raw = exchange(reads, b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual([body for _, _, body in parse_responses(raw)], [b"[b'', b'', b'', [], []]"] * 2)

    def test_env_keys_bounded(self):
        for i in range(2 * wsgi.ENV_KEYS_LIMIT):
            self.assertEqual(wsgi.env_key(f"X-NAME-{i}"), f"HTTP_X_NAME_{i}")
        self.assertEqual(wsgi.env_key("X_NAME"), "")
        self.assertLessEqual(len(wsgi.ENV_KEYS), wsgi.ENV_KEYS_LIMIT)

    def test_no_keep_alive(self):
        raw = exchange(echo, b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n", Options(keep_alive=0))
        got = parse_responses(raw)
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0][1]["connection"], "close")

    def test_stalled_client_dropped(self):
        cases = [
            ("half a head", b"GET / HTTP/1.1\r\nHost: h"),
            ("half a body", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"),
            ("nothing", b""),
        ]
        for name, data in cases:
            with self.subTest(name):
                pair = Pair(validated(echo), Options(keep_alive=2, timeout=0.2))
                pair.client.sendall(data)
                self.assertEqual(pair.read_all(), b"", "want the connection closed, unanswered")
                self.assertFalse(pair.thread.is_alive())

    def test_tcp(self):
        pair = Pair(validated(echo), family=socket.AF_INET)
        got = parse_responses(pair.exchange(b"GET /tcp HTTP/1.1\r\nHost: h\r\n\r\n"))
        self.assertEqual(got[0][2], b"GET /tcp  ")


def streamed_then(app):
    return app  # not validated: validate objects to the exception mid-iteration


class LoadTest(unittest.TestCase):
    def test_load(self):
        cases = [
            ("attribute", "wsgiref.simple_server:demo_app", "demo_app"),
            ("default name", "test_wsgi", "application"),
            ("call", "test_wsgi:make_app()", "made"),
        ]
        for name, spec, want in cases:
            with self.subTest(name):
                self.assertEqual(load(spec).__name__, want)

    def test_load_fails(self):
        cases = [
            ("no module", "no_such_module_here:app", ImportError),
            ("no attribute", "test_wsgi:missing", AttributeError),
            ("not callable", "test_wsgi:NOT_AN_APP", TypeError),
        ]
        for name, spec, error in cases:
            with self.subTest(name):
                with self.assertRaises(error):
                    load(spec)


def application(environ, start_response):
    return echo(environ, start_response)


def make_app():
    def made(environ, start_response):
        return echo(environ, start_response)
    return made


NOT_AN_APP = 42


if __name__ == "__main__":
    unittest.main()
