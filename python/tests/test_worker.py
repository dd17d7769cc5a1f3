"""The accept loops' policy: actd.worker."""

import unittest

from actd.worker import Retry


class RetryTest(unittest.TestCase):
    def test_backoff(self):
        # found: what each try finds; want: whether the child tries after
        # each connection, a try being made only where due.
        cases = [
            ("saturated: always", [True] * 4, "TTTT"),
            ("one miss: skip 1", [False, True, True], "T-TT"),
            ("misses double the skip", [False, False, False], "T-T--T----"),
            ("a find resets it", [False, True, False], "T-TT-"),
            ("at most 64", [False] * 8, "T-T--T----T" + "-" * 8 + "T" + "-" * 16 + "T" + "-" * 32 + "T" + "-" * 64
             + "T" + "-" * 64),
        ]
        for name, found, want in cases:
            with self.subTest(name):
                r, got, tries = Retry(), "", iter(found)
                while True:
                    if not r.due():
                        got += "-"
                        continue
                    try:
                        r.record(next(tries))
                    except StopIteration:
                        break
                    got += "T"
                self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
