"""The access log: one line per request, as actd's --access-log asks.

The master passes the choice in the environment (docs/python.md, "Access
log"): ACTD_ACCESS_LOG is "journal" (one native-protocol entry per request,
actd.journal.Native) or "fd:N" (a file the master opened with O_APPEND, one
write(2) per line, so lines from many children stay whole); absent, there
is no access log. ACTD_ACCESS_LOG_FORMAT is an Apache LogFormat of
gunicorn's letters, compiled once into a function (compile_format).

The query string is left out of %r, %U and HTTP_PATH (it may carry
tokens); %q has it, for an operator who asks.
"""

import os
import re
import sys
import time
from collections import namedtuple

from . import journal

DEFAULT_FORMAT = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D'
IDENTIFIER = journal.IDENTIFIER
# %{Name}X, %>X or %X; an empty match after "%" is a "%" that starts none
DIRECTIVE = re.compile(r"%(?:\{([^}]*)\}([a-zA-Z])|>?([a-zA-Z%])|)")
UNSAFE = re.compile(r'[^\x20-\x7e]|["\\]')
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# One request as the log sees it: remote is the client's address (after
# PROXY and trusted forwarded headers); path has no query, query is
# without its "?"; status a str ("200", or "-" when nothing was sent);
# sent the body bytes; micros the duration; headers the request's (upper-
# case names, actd.http.Request); started the wall-clock time it began.
Entry = namedtuple("Entry", "remote method path query protocol status sent micros headers started")


def escape(text):
    """Return text with '"', '\\' and bytes outside printable ASCII as
    Apache writes them (\\", \\\\, \\xhh), so a line stays one line and
    its quoted fields stay fields."""
    if not UNSAFE.search(text):
        return text
    return UNSAFE.sub(_escaped, text)


def _escaped(m):
    c = m.group()
    if c in '"\\':
        return "\\" + c
    return "".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogateescape"))


def clf_time(when):
    """Return when (seconds since the epoch) as %t has it, local time:
    [10/Oct/2000:13:55:36 -0700]; month names are English whatever the
    locale."""
    t = time.localtime(when)
    offset = t.tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    offset = abs(offset)
    return (f"[{t.tm_mday:02d}/{MONTHS[t.tm_mon - 1]}/{t.tm_year}:{t.tm_hour:02d}:{t.tm_min:02d}:"
            f"{t.tm_sec:02d} {sign}{offset // 60:02d}{offset % 60:02d}]")


def _header(name):
    key = name.upper()
    return lambda e: escape(e.headers.get(key, "")) or "-"


LETTERS = {
    "h": lambda e: e.remote or "-",
    "l": lambda e: "-",
    "u": lambda e: "-",
    "t": lambda e: clf_time(e.started),
    "r": lambda e: escape(f"{e.method} {e.path} {e.protocol}"),
    "m": lambda e: e.method,
    "U": lambda e: escape(e.path),
    "q": lambda e: "?" + escape(e.query) if e.query else "",
    "H": lambda e: e.protocol,
    "s": lambda e: e.status,
    "b": lambda e: str(e.sent) if e.sent else "-",
    "B": lambda e: str(e.sent),
    "D": lambda e: str(e.micros),
    "T": lambda e: str(e.micros // 1000000),
    "P": lambda e: str(os.getpid()),
    "%": lambda e: "%",
}


def compile_format(fmt):
    """Return a function from an Entry to its log line (no newline) for
    fmt, an Apache LogFormat. Raises ValueError naming a directive that is
    not one of LETTERS or %{Name}i."""
    parts = []
    at = 0
    for m in DIRECTIVE.finditer(fmt):
        if m.start() > at:
            parts.append(fmt[at:m.start()])
        if m.group(2) == "i":
            parts.append(_header(m.group(1)))
        elif m.group(3) in LETTERS:
            parts.append(LETTERS[m.group(3)])
        else:
            what = m.group() if m.group(2) or m.group(3) else fmt[m.start():m.start() + 2]
            raise ValueError(f"access log format {fmt!r}: unknown directive {what!r}")
        at = m.end()
    if at < len(fmt):
        parts.append(fmt[at:])
    return lambda e: "".join([p if type(p) is str else p(e) for p in parts])


class FdWriter:
    """Writes each line to fd with one write(2) (the file is O_APPEND)."""

    def __init__(self, fd):
        self.fd = fd

    def __call__(self, line, entry):
        try:
            os.write(self.fd, (line + "\n").encode("utf-8", "surrogateescape"))
        except OSError as err:
            print(f"actd.wsgi: access log fd {self.fd}: {err}", file=sys.stderr, flush=True)


class StderrWriter:
    """Writes each line to stderr: the access log without a journal."""

    def __call__(self, line, entry):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


class JournalWriter:
    """Sends each line as one journal entry with the request's fields;
    a line the journal does not take goes to stderr."""

    def __init__(self, native):
        self.native = native  # an actd.journal.Native
        self.fallback = StderrWriter()

    def __call__(self, line, entry):
        fields = (("MESSAGE", line), ("PRIORITY", "6"), ("SYSLOG_IDENTIFIER", IDENTIFIER),
                  ("HTTP_STATUS", entry.status), ("HTTP_METHOD", entry.method),
                  ("HTTP_PATH", entry.path), ("HTTP_BYTES", str(entry.sent)),
                  ("HTTP_DURATION_US", str(entry.micros)), ("REMOTE_ADDR", entry.remote))
        if not self.native.send(fields):
            self.fallback(line, entry)


class AccessLog:
    """The access log of one child: format (Entry -> line) and write
    (line, Entry)."""

    __slots__ = ("format", "write")

    def __init__(self, format, write):
        self.format = format
        self.write = write

    def log(self, entry):
        self.write(self.format(entry), entry)


def from_environ(environ=os.environ):
    """Return the AccessLog that ACTD_ACCESS_LOG and ACTD_ACCESS_LOG_FORMAT
    ask for, or None: the variable absent or "off", or not "journal" nor
    "fd:N" (then with a line to stderr). "journal" without a journal socket
    writes to stderr. Raises ValueError for a format with an unknown
    directive."""
    where = environ.get("ACTD_ACCESS_LOG", "")
    if where in ("", "off"):
        return None
    format = compile_format(environ.get("ACTD_ACCESS_LOG_FORMAT") or DEFAULT_FORMAT)
    if where == "journal":
        native = journal.Native.connect()
        return AccessLog(format, JournalWriter(native) if native else StderrWriter())
    if where.startswith("fd:") and where[3:].isdigit():
        return AccessLog(format, FdWriter(int(where[3:])))
    print(f"actd.wsgi: ACTD_ACCESS_LOG={where!r}: want journal or fd:N; no access log",
          file=sys.stderr, flush=True)
    return None

