"""Priorities for what the adapter writes to stderr under systemd.

A child's stderr is the master's, the journal when actd runs as a service:
each line becomes an entry at priority 6 (info), so an application's
traceback would be a run of info entries that `journalctl -p err` never
shows. journald reads a "<N>" prefix on a line as that line's priority
(SyslogLevelPrefix=, on by default), but only a stream that is the
journal should get one: systemd names it in JOURNAL_STREAM
("DEVICE:INODE" of the stream it connected), which a child inherits with
the master's stderr. Elsewhere (a terminal, a file, a pipe) lines stay as
they are.
"""

import os

ERR = 3  # syslog priority of an error


def prefix(stream, priority, environ=os.environ):
    """Return "<priority>" if stream is the journal (JOURNAL_STREAM names
    its device and inode), else ""."""
    want = environ.get("JOURNAL_STREAM", "")
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return ""
    return f"<{priority}>" if want == f"{st.st_dev}:{st.st_ino}" else ""


def lines(text, tag):
    """Return text with tag before each of its lines."""
    if not tag:
        return text
    return "".join(tag + line for line in text.splitlines(keepends=True))
