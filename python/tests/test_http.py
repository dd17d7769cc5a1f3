"""Request heads and bodies: actd.http."""

import random
import socket
import unittest

from actd import http


def parse(head):
    return http.parse(head)


class ParseTest(unittest.TestCase):
    def test_good(self):
        cases = [
            ("origin form", b"GET /a/b?x=1 HTTP/1.1\r\nHost: h", "GET", "/a/b?x=1", "HTTP/1.1", {"HOST": "h"}),
            ("HTTP/1.0", b"HEAD / HTTP/1.0", "HEAD", "/", "HTTP/1.0", {}),
            ("repeated fields join", b"GET / HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\nHost: h", "GET", "/", "HTTP/1.1",
             {"X-A": "1,2", "HOST": "h"}),
            ("whitespace around value", b"GET / HTTP/1.0\r\nX-A: \t v w \t", "GET", "/", "HTTP/1.0", {"X-A": "v w"}),
            ("empty value", b"GET / HTTP/1.0\r\nX-A:", "GET", "/", "HTTP/1.0", {"X-A": ""}),
            ("latin-1 value", b"GET / HTTP/1.0\r\nX-A: \xe9", "GET", "/", "HTTP/1.0", {"X-A": "\xe9"}),
            ("asterisk", b"OPTIONS * HTTP/1.1\r\nHost: h", "OPTIONS", "*", "HTTP/1.1", {"HOST": "h"}),
        ]
        for name, head, method, target, version, headers in cases:
            with self.subTest(name):
                r = parse(head)
                self.assertEqual((r.method, r.target, r.version, r.headers), (method, target, version, headers))

    def test_bad(self):
        cases = [
            ("no version", b"GET /", http.BadRequest),
            ("two spaces", b"GET  / HTTP/1.1", http.BadRequest),
            ("bad method", b"G(T / HTTP/1.1", http.BadRequest),
            ("space before colon", b"GET / HTTP/1.1\r\nHost : h", http.BadRequest),
            ("folded line", b"GET / HTTP/1.1\r\nX-A: 1\r\n  2", http.BadRequest),
            ("no colon", b"GET / HTTP/1.1\r\nnocolon", http.BadRequest),
            ("bare LF in value", b"GET / HTTP/1.1\r\nX-A: 1\nX-B: 2", http.BadRequest),
            ("NUL in value", b"GET / HTTP/1.1\r\nX-A: 1\x002", http.BadRequest),
            ("control in target", b"GET /\x01 HTTP/1.1", http.BadRequest),
            ("not HTTP", b"GET / FTP/1.1", http.BadRequest),
            ("HTTP/2.0", b"GET / HTTP/2.0", http.BadVersion),
            ("two lengths", b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4", http.BadRequest),
            ("negative length", b"POST / HTTP/1.1\r\nContent-Length: -1", http.BadRequest),
            ("length and chunked", b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked", http.BadRequest),
            ("gzip coding", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked", http.BadCoding),
            ("chunked not last", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip", http.BadRequest),
            ("not quite chunked", b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\xa0", http.BadRequest),
            ("no host", b"GET / HTTP/1.1", http.BadRequest),
            ("two hosts", b"GET / HTTP/1.0\r\nHost: a\r\nHost: a", http.BadRequest),
            ("huge length", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1234567890123456789", http.ContentTooLarge),
            ("chunked in 1.0", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked", http.BadRequest),
            ("too many fields", b"GET / HTTP/1.1" + b"\r\nX: 1" * 101, http.HeadTooLarge),
        ]
        for name, head, error in cases:
            with self.subTest(name):
                with self.assertRaises(error):
                    parse(head)

    def test_fast_path_agrees(self):
        """parse takes a fast path for heads it can check at once; it must
        return or raise what the line-by-line parser does, for every head."""
        heads = [
            b"GET / HTTP/1.1", b"GET / HTTP/1.0", b"GET / HTTP/1.9", b"GET / HTTP/1.1\r\n",
            b"GET / HTTP/1.1\r\nA: b\r\n", b"GET / HTTP/1.1\r\n: b", b"GET / HTTP/1.1\r\nA:\tb\t",
            b"GET / HTTP/1.1\r\nA: b\r\nA: c\r\nContent-Length: 4", b"GET /\xff HTTP/1.1",
            b"GET / HTTP/1.1" + b"\r\nX: 1" * 100, b"GET / HTTP/1.1" + b"\r\nX: 1" * 101,
            b"GET / HTTP/1.1\r\nA: \x7f", b"GET / HTTP/1.1\r\nA: b\rc", b"GET / HTTP/1.1\r\nA\x00: b",
            b"GET / HTTP/1.1 ", b" GET / HTTP/1.1", b"GET / http/1.1", b"GET / HTTP/11",
        ]
        alphabet = b"GET /:HTP1.0\r\n\t -_aZ\x00\x7f\xe9,"
        rand = random.Random(14)
        for _ in range(3000):
            line = b"GET /x HTTP/1.1" if rand.random() < 0.5 else bytes(rand.choices(alphabet, k=rand.randint(0, 16)))
            heads.append(line + b"\r\n".join([b""] + [bytes(rand.choices(alphabet, k=rand.randint(0, 12)))
                                                       for _ in range(rand.randint(0, 3))]))
        for head in heads:
            with self.subTest(head=head):
                self.assertEqual(outcome(http.parse, head), outcome(http.parse_strictly, head))

    def test_keep_alive(self):
        cases = [
            (b"GET / HTTP/1.1\r\nHost: h", True),
            (b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close", False),
            (b"GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, Close", False),
            (b"GET / HTTP/1.0", False),
            (b"GET / HTTP/1.0\r\nConnection: keep-alive", True),
        ]
        for head, want in cases:
            with self.subTest(head):
                self.assertEqual(parse(head).keep_alive, want)

    def test_describe(self):
        for target, want in [("/p", "GET /p"), ("/p?token=s3cret", "GET /p"), ("/p?", "GET /p"),
                             ("http://h/p?q", "GET http://h/p")]:
            with self.subTest(target):
                self.assertEqual(http.parse(f"GET {target} HTTP/1.1\r\nHost: h".encode()).describe(), want)

    def test_split_target(self):
        cases = [
            ("/a%20b?q=%20", "/a b", "q=%20"),
            ("/caf%C3%A9", "/caf\xc3\xa9", ""),  # PEP 3333: bytes as latin-1
            ("http://example.com/x?y", "/x", "y"),
            ("http://example.com", "/", ""),
            ("/p#frag", "/p", ""),
            ("/p?q#frag", "/p", "q"),
            ("/caf\xe9", "/caf\xe9", ""),  # a raw byte stays that byte
            ("/caf\xe9%20x", "/caf\xe9 x", ""),
        ]
        for target, path, query in cases:
            with self.subTest(target):
                r = http.Request("GET", target, "HTTP/1.1", {})
                self.assertEqual(r.split_target(), (path, query))


def outcome(parse, head):
    """Return what parse makes of head: the request's fields, or the error."""
    try:
        r = parse(head)
    except http.BadRequest as err:
        return type(err), str(err)
    return r.method, r.target, r.version, r.headers, r.length, r.chunked, r.keep_alive, r.expect_continue


class FieldsSeenTest(unittest.TestCase):
    def test_remembered_fields(self):
        # a field split once is remembered, but not credentials, and not past the bound;
        # a remembered field parses as it did the first time
        http.FIELDS_SEEN.clear()  # other tests may have filled it
        head = (b"GET / HTTP/1.1\r\nHost: seen.example\r\nX-Seen:  a b \t\r\nCookie: s=secret\r\n"
                b"Authorization: Bearer secret")
        for _ in range(2):
            got = http.parse(head).headers
            self.assertEqual(got, {"HOST": "seen.example", "X-SEEN": "a b", "COOKIE": "s=secret",
                                   "AUTHORIZATION": "Bearer secret"})
        self.assertEqual(http.FIELDS_SEEN.get("X-Seen:  a b \t"), ("X-SEEN", "a b"))
        self.assertFalse([f for f in http.FIELDS_SEEN if "secret" in f], "credentials remembered")
        for i in range(2 * http.FIELDS_SEEN_LIMIT):
            http.parse(b"GET / HTTP/1.1\r\nHost: h\r\nX-N: %d" % i)
        self.assertLessEqual(len(http.FIELDS_SEEN), http.FIELDS_SEEN_LIMIT)
        self.assertEqual(http.parse(b"GET / HTTP/1.1\r\nHost: h\r\nX-N: 2047").headers["X-N"], "2047")

    def test_remembered_heads(self):
        # a plain head parsed again gives the Request made the first time,
        # but one with a query or credentials, and none past the bound
        http.HEADS_SEEN.clear()  # other tests may have filled it
        cases = [
            ("plain", b"GET /a HTTP/1.1\r\nHost: h\r\nX-A: 1", True),
            ("HTTP/1.0", b"HEAD /b HTTP/1.0", True),
            ("query", b"GET /a?token=secret HTTP/1.1\r\nHost: h", False),
            ("cookie", b"GET /a HTTP/1.1\r\nHost: h\r\nCookie: s=secret", False),
            ("authorization", b"GET /a HTTP/1.1\r\nHost: h\r\nAuthorization: Basic c2VjcmV0", False),
            ("strict way", b"GET /a HTTP/1.1\r\nHost: h\r\nX-A:\tb\x01", None),
        ]
        for name, head, kept in cases:
            with self.subTest(name):
                if kept is None:
                    self.assertRaises(http.BadRequest, http.parse, head)
                    self.assertRaises(http.BadRequest, http.parse, head)
                    continue
                first, second = http.parse(head), http.parse(head)
                self.assertEqual((first is second, first.seen), (kept, kept))
                self.assertEqual((second.method, second.target, second.version, second.headers),
                                 (first.method, first.target, first.version, first.headers))
        self.assertFalse([h for h in http.HEADS_SEEN if b"secret" in h], "credentials remembered")
        for i in range(2 * http.HEADS_SEEN_LIMIT):
            http.parse(b"GET /%d HTTP/1.1\r\nHost: h" % i)
        self.assertLessEqual(len(http.HEADS_SEEN), http.HEADS_SEEN_LIMIT)
        self.assertEqual(http.parse(b"GET /2047 HTTP/1.1\r\nHost: h").target, "/2047")

    def test_remembered_fields_blocks(self):
        # the fields after a request line are remembered as a block, but
        # with credentials; a remembered block still needs a good request
        # line and, for HTTP/1.1, its Host
        http.BLOCKS_SEEN.clear()
        http.HEADS_SEEN.clear()
        for i in range(2):
            got = http.parse(b"GET /a?n=%d HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nX-A: 2" % i)
            self.assertEqual((got.target, got.headers), ("/a?n=%d" % i, {"HOST": "h", "X-A": "1,2"}))
        self.assertIn(b"Host: h\r\nX-A: 1\r\nX-A: 2", http.BLOCKS_SEEN)
        http.parse(b"GET /a?n=1 HTTP/1.1\r\nHost: h\r\nCookie: s=secret")
        self.assertFalse([b for b in http.BLOCKS_SEEN if b"secret" in b], "credentials remembered")
        http.parse(b"GET /a HTTP/1.0\r\nX-B: 1")
        cases = [
            ("bad request line", b"GET /a  HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nX-A: 2", http.BadRequest),
            ("bad version", b"GET /a HTTP/2.0\r\nHost: h\r\nX-A: 1\r\nX-A: 2", http.BadVersion),
            ("no Host in 1.1", b"GET /a HTTP/1.1\r\nX-B: 1", http.BadRequest),
            ("empty fields", b"GET /a HTTP/1.1\r\n", http.BadRequest),
        ]
        for name, head, err in cases:
            with self.subTest(name):
                self.assertRaises(err, http.parse, head)


class ReaderTest(unittest.TestCase):
    def reader(self, data):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        a.sendall(data)
        a.shutdown(socket.SHUT_WR)
        return http.Reader(b)

    def test_heads(self):
        r = self.reader(b"\r\n\r\nGET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\nA: b\r\n\r\n")
        self.assertEqual(r.head(), b"GET /1 HTTP/1.1")
        self.assertEqual(r.head(), b"GET /2 HTTP/1.1\r\nA: b")
        self.assertIsNone(r.head())

    def test_limits(self):
        cases = [
            ("long line", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", http.LineTooLong),
            ("large head", b"GET / HTTP/1.1\r\n" + b"X: " + b"a" * 70000 + b"\r\n\r\n", http.HeadTooLarge),
            ("cut head", b"GET / HTTP/1.1\r\nX: 1", http.ClientGone),
            ("LF LF", b"GET / HTTP/1.1\nX: 1\n\n", http.BadRequest),
            ("lone LF", b"\n", http.BadRequest),
            ("CR then LF alone", b"\r\n\r\r\n", http.BadRequest),
            ("bare CR", b"GET / HTTP/1.1\rX: 1\r\r", http.BadRequest),
            ("bad request line, no end", b"GET /\r\n", http.BadRequest),
        ]
        for name, data, error in cases:
            with self.subTest(name):
                with self.assertRaises(error):
                    self.reader(data).head()

    def test_bodies(self):
        cases = [
            ("length", lambda r: http.LengthBody(r, 11), b"hello world", b"hello world"),
            ("chunked", lambda r: http.ChunkedBody(r), b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", b"hello world"),
            ("chunked trailers", lambda r: http.ChunkedBody(r), b"b\r\nhello world\r\n0\r\nX-T: 1\r\n\r\n", b"hello world"),
        ]
        for name, make, data, want in cases:
            with self.subTest(name):
                body = make(self.reader(data + b"NEXT"))
                self.assertEqual(body.read(), want)
                self.assertEqual(body.read(), b"")
                self.assertEqual(body.reader.buf, b"NEXT")

    def test_readline(self):
        body = http.LengthBody(self.reader(b"a\nbb\nccc"), 8)
        self.assertEqual(body.readline(), b"a\n")
        self.assertEqual(body.readline(1), b"b")
        self.assertEqual(body.readlines(), [b"b\n", b"ccc"])
        self.assertEqual(body.readline(), b"")

    def test_bad_chunks(self):
        cases = [
            ("size not hex", b"zz\r\nhello\r\n0\r\n\r\n", http.BadRequest),
            ("data longer than size", b"3\r\nhello\r\n0\r\n\r\n", http.BadRequest),
            ("bare LF in an extension", b"5;a\nb\r\nhello\r\n0\r\n\r\n", http.BadRequest),
            ("space before the size", b" 5\r\nhello\r\n0\r\n\r\n", http.BadRequest),
            ("cut", b"5\r\nhel", http.ClientGone),
        ]
        for name, data, error in cases:
            with self.subTest(name):
                with self.assertRaises(error):
                    http.ChunkedBody(self.reader(data)).read()


if __name__ == "__main__":
    unittest.main()
