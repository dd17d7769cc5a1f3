"""journal.py: an error's lines get priority err only on the journal's stream."""

import os
import tempfile
import unittest

from actd import journal


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


if __name__ == "__main__":
    unittest.main()
