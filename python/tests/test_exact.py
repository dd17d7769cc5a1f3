"""actd.exact: how many bytes of a peek a worker that may give its
connection back reads (the table of cmd/actd's TestWholeSpan)."""

import unittest

import random

from actd import screen
from actd.exact import NotWhole, Span, one_plain_head, spans, whole_span

GET = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
POST = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
CHUNKED = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"


class WholeSpanTest(unittest.TestCase):
    def test_whole_span(self):
        for name, peek, want in [
            ("one request", GET, len(GET)),
            ("two whole", GET + GET, 2 * len(GET)),
            ("whole then start of next", GET + b"GET / HT", len(GET)),
            ("whole then head of next without its body", GET + POST + b"ab", len(GET)),
            ("body whole", POST + b"abcde", len(POST) + 5),
            ("body whole then next", POST + b"abcde" + GET, len(POST) + 5 + len(GET)),
            ("body not in: its length", POST + b"ab", len(POST) + 5),
            ("chunked whole", CHUNKED + b"3\r\nabc\r\n0\r\n\r\nGET", len(CHUNKED) + 13),
            ("chunked not whole: no bound", CHUNKED + b"3\r\nabc\r\n", None),
            ("head not whole: no bound", b"GET / HTTP/1.1\r\nHo", None),
            ("two Content-Length: no bound",
             b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", None),
            ("empty lines before a request", b"\r\n" + GET, 2 + len(GET)),
            ("nothing", b"", 0),
        ]:
            with self.subTest(name):
                self.assertEqual(whole_span(peek), want)


class PlainHeadTest(unittest.TestCase):
    def test_same_as_the_walk(self):
        # one_plain_head's shortcut gives what the request-by-request walk gives
        parts = [b"GET / HTTP/1.1", b"GET /a?b HTTP/1.0", b"\r\n", b"Host: a", b"X: \tb ", b"\n", b"\r",
                 b"Content-Length: 2", b"content-length: x", b"Transfer-Encoding: chunked", b"ab", b"\x00",
                 b"GET", b" ", b":", b"\r\n\r\n", b"content-length", b"X: Content-Length: 1",
                 b"TRANSFER-ENCODING:", b"Content-Length : 2", b"/transfer-encoding", b"\t"]
        rng = random.Random(20)
        peeks = [GET, GET + GET, POST + b"abcde", b"\r\n" + GET, GET[:-2], b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
                 b"GET / HTTP/1.1\r\ncontent-length\r\n\r\n", b"GET / HTTP/1.1\r\nTransfer-Encoding\r\n\r\n",
                 b"GET /content-length HTTP/1.1\r\nX: transfer-encoding\r\n\r\n"]
        peeks += [b"".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(20000)]
        fields = [b"Host: a", b"X: b\t", b"Connection: close", b"Y:", b"Z : c", b"W: \x7f", b"V: \xff"]
        peeks += [b"\r\n".join([b"GET / HTTP/1.1"] + rng.sample(fields, rng.randint(0, 4))) + b"\r\n\r\n"
                  for _ in range(500)]
        shortcuts = 0
        for peek in peeks:
            self.assertEqual(whole_span(peek), spans(peek), peek)
            plain = one_plain_head(peek)
            shortcuts += plain
            if plain:  # a screening child judges it ready on this alone (actd.screen.Screen.look)
                self.assertTrue(screen.ready("http", peek), peek)
        self.assertGreater(shortcuts, 100)  # the shortcut was tried


class _NoPeek:
    """A connection whose socket fails any read: a Span must not peek."""

    class sock:
        @staticmethod
        def recv(size, flags=0):
            raise AssertionError("peeked, though the screen had")


class SpanTest(unittest.TestCase):
    def test_screened_first_read_needs_no_peek(self):
        # a screening child's peek bounds the first request's reads as the Span's own would
        for name, seen, want in [
            ("one request", GET, len(GET)),
            ("two whole", GET + GET, 2 * len(GET)),
            ("whole then start of next", GET + b"GET / HT", len(GET)),
            ("body whole", POST + b"abcde", len(POST) + 5),
        ]:
            with self.subTest(name):
                span = Span(seen)
                self.assertEqual(span.allowed(_NoPeek(), 65536), want)
                # the screen found it one plain head: its length, taken as is
                plain = Span(seen, plain=one_plain_head(seen))
                self.assertEqual(plain.allowed(_NoPeek(), 65536), want)

    def test_unscreened_first_read_peeks(self):
        with self.assertRaises(AssertionError):
            Span().allowed(_NoPeek(), 65536)

    def test_next_request_glanced(self):
        # a next request whose keep-alive wait peeked (actd.glance): begin
        # bounds its reads by that peek, with no peek of its own; None
        # (no glance) leaves the peek to the first read
        for name, peek, want in [
            ("one request", GET, len(GET)),
            ("two whole", GET + GET, 2 * len(GET)),
            ("whole then start of next", GET + b"GET / HT", len(GET)),
            ("body whole", POST + b"abcde", len(POST) + 5),
            ("the client gone", b"", 65536),
            ("not whole", b"GET / HT", None),
            ("body not whole", POST + b"ab", None),
        ]:
            with self.subTest(name):
                span = Span(GET)
                span.took(len(GET))
                if want is None:
                    with self.assertRaises(NotWhole):
                        span.begin(peek)
                    continue
                span.begin(peek)
                self.assertEqual(span.allowed(_NoPeek(), 65536), want)
        span = Span(GET)
        span.begin(None)
        with self.assertRaises(AssertionError):
            span.allowed(_NoPeek(), 65536)

    def test_same_peek_again(self):
        # a peek like the last whole one takes its span without a walk;
        # any other is walked (a next request not whole still goes back)
        span = Span()
        span.begin(GET + GET)
        self.assertEqual(span.allowed(_NoPeek(), 65536), 2 * len(GET))
        for name, peek, want in [
            ("the same again", GET + GET, 2 * len(GET)),
            ("one of them", GET, len(GET)),
            ("the two again", GET + GET, 2 * len(GET)),
            ("not whole", GET[:5], None),
            ("body whole", POST + b"abcde", len(POST) + 5),
            ("its start again: not whole", POST + b"ab", None),
        ]:
            with self.subTest(name):
                if want is None:
                    with self.assertRaises(NotWhole):
                        span.begin(peek)
                    continue
                span.begin(peek)
                self.assertEqual(span.allowed(_NoPeek(), 65536), want)



if __name__ == "__main__":
    unittest.main()
