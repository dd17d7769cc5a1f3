"""journal.py: an error's lines get priority err only on the journal's stream."""

import io
import os
import socket
import tempfile
import unittest

from actd import journal
from helpers import parse_native


class PrefixTest(unittest.TestCase):
    def test_prefix(self):
        with tempfile.TemporaryFile("w+") as stream, tempfile.TemporaryFile("w+") as other:
            st = os.fstat(stream.fileno())
            named = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
            for name, env, want in [
                ("the journal's stream", named, "<3>"),
                ("no JOURNAL_STREAM", {}, ""),
                ("another stream", {"JOURNAL_STREAM": "1:2"}, ""),
            ]:
                with self.subTest(name):
                    self.assertEqual(journal.prefix(stream, journal.ERR, env), want)
            self.assertEqual(journal.prefix(other, journal.ERR, named), "")

    def test_lines(self):
        text = "Traceback (most recent call last):\n  File \"app.py\"\nValueError: x\n"
        self.assertEqual(journal.lines(text, "<3>"),
                         "<3>Traceback (most recent call last):\n<3>  File \"app.py\"\n<3>ValueError: x\n")
        self.assertEqual(journal.lines(text, ""), text)


class ErrorTest(unittest.TestCase):
    TEXT = "error serving GET /a:\nTraceback (most recent call last):\nValueError: x\n"

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.path = os.path.join(tmp.name, "socket")
        self.addCleanup(setattr, journal, "SOCKET", journal.SOCKET)
        journal.SOCKET = self.path

    def test_error(self):
        with tempfile.TemporaryFile("w+") as stream:
            st = os.fstat(stream.fileno())
            named = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.bind(self.path)
                journal.error(self.TEXT, (("HTTP_PATH", "/a"),), stream, named)
                sock.settimeout(5)
                got = parse_native(sock.recv(1 << 16))
            stream.seek(0)
            self.assertEqual(stream.read(), "", "the journal took it: nothing on the stream")
        self.assertEqual(got, {"MESSAGE": self.TEXT.rstrip("\n"), "PRIORITY": "3",
                               "SYSLOG_IDENTIFIER": "actd", "HTTP_PATH": "/a"})

    def test_error_without_socket(self):
        for name, journal_stream, want in [
            ("the journal's stream", True, journal.lines(TEXT := self.TEXT, "<3>")),
            ("another stream", False, TEXT),
        ]:
            with self.subTest(name), tempfile.TemporaryFile("w+") as stream:
                st = os.fstat(stream.fileno())
                env = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"} if journal_stream else {}
                journal.error(self.TEXT, (), stream, env)
                stream.seek(0)
                self.assertEqual(stream.read(), want)

    def test_error_not_a_file(self):
        stream = io.StringIO()
        journal.error(self.TEXT, (), stream, {"JOURNAL_STREAM": "1:2"})
        self.assertEqual(stream.getvalue(), self.TEXT)


if __name__ == "__main__":
    unittest.main()
