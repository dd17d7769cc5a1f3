"""actd.fds: the fds actd passed, kept from the programs a child runs."""

import os
import unittest

from actd import fds


class PassedTest(unittest.TestCase):
    def test_passed(self):
        for name, environ, want in [
            ("one listener and the channel", {"LISTEN_FDS": "1", "ACTD_CHANNEL_FD": "4"}, [3, 4]),
            ("two listeners, shared mode", {"LISTEN_FDS": "2"}, [3, 4]),
            ("nothing set", {}, []),
            ("not numbers", {"LISTEN_FDS": "x", "ACTD_CHANNEL_FD": "-1"}, []),
            ("access log file", {"LISTEN_FDS": "1", "ACTD_CHANNEL_FD": "4", "ACTD_ACCESS_LOG": "fd:5"}, [3, 4, 5]),
            ("access log to the journal", {"LISTEN_FDS": "1", "ACTD_ACCESS_LOG": "journal"}, [3]),
            ("access log and TLS", {"LISTEN_FDS": "2", "ACTD_CHANNEL_FD": "5", "ACTD_ACCESS_LOG": "fd:6",
                                    "ACTD_TLS": "0=7 1=8"}, [3, 4, 5, 6, 7, 8]),
        ]:
            with self.subTest(name):
                self.assertEqual(fds.passed(environ), want)


class CloseOnExecTest(unittest.TestCase):
    def test_marks_inheritable_fds(self):
        """An inheritable fd named by the environment loses the flag; a
        missing fd is skipped."""
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        self.addCleanup(os.close, w)
        os.set_inheritable(w, True)
        closed = os.dup(r)
        os.close(closed)
        fds.close_on_exec({"ACTD_CHANNEL_FD": str(w)})
        fds.close_on_exec({"ACTD_CHANNEL_FD": str(closed)})
        self.assertFalse(os.get_inheritable(w), "got inheritable, want close-on-exec")


if __name__ == "__main__":
    unittest.main()
