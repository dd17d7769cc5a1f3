"""Trusted forwarded headers: the client behind a proxy that says so.

Off by default. With --forwarded-allow-ips (ACTD_FORWARDED_ALLOW_IPS,
comma-separated CIDRs or addresses, gunicorn's name), a request whose
connection comes from one of those networks (its address after any PROXY
header) takes REMOTE_ADDR from X-Forwarded-For: the rightmost entry that
is not itself in the list, the leftmost if all are; and wsgi.url_scheme
from X-Forwarded-Proto (its last value, http or https). A request from
elsewhere keeps its own address and scheme, whatever it sends.
"""

from . import proxy


def networks(text):
    """Return the networks of a comma-separated list of CIDRs (a bare
    address is a /32 or /128); [] for an empty one. Raises ValueError."""
    return [proxy.network(part) for part in text.split(",") if part.strip()]


def resolve(allowed, remote, headers):
    """Return (REMOTE_ADDR, REMOTE_PORT, scheme) of a request from remote,
    (address, port) strs, with header dict headers (upper-case names):
    remote and None (the listener's scheme) unless remote is within
    allowed. An address taken from X-Forwarded-For has no port ("")."""
    if not allowed or not proxy.within(proxy.host_of(remote), allowed):
        return remote[0], remote[1], None
    address, port = remote
    chain = [entry.strip() for entry in headers.get("X-FORWARDED-FOR", "").split(",") if entry.strip()]
    if chain:
        address, port = chain[0], ""
        for entry in reversed(chain):
            if not proxy.within(proxy.host_of((entry, 0)), allowed):
                address = entry
                break
    scheme = headers.get("X-FORWARDED-PROTO", "").rpartition(",")[2].strip().lower()
    return address, port, scheme if scheme in ("http", "https") else None
