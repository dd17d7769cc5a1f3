"""A WSGI application that holds 30 MB it made at import, for --preload.

Each response says which process imported the module (the zygote under
--preload, the child itself without it) and which serves.
"""

import os

BALLAST = b"x" * (30 << 20)  # written, so resident: pages a fork shares
IMPORTED_BY = os.getpid()


def app(environ, start_response):
    body = f"imported {IMPORTED_BY} served {os.getpid()} ballast {len(BALLAST)}\n".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
