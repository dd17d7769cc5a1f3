"""The test application of python/offload_test.go (write completion).

    /bytes   BODY as a one-element list
    /file    BODY from a regular file, as a wsgi.file_wrapper
    /echo    the method, path and query, as validated.py's /echo

BODY is 1 MiB, byte i being (131 i + i // 1024) mod 256: the test
computes its checksum the same way.
"""

import os
import tempfile

SIZE = 1 << 20
BODY = bytes((131 * i + (i >> 10)) & 0xFF for i in range(SIZE))
_file = tempfile.TemporaryFile()  # unlinked: nothing is left behind
_file.write(BODY)
_file.flush()


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/bytes":
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return [BODY]
    if path == "/file":
        f = os.fdopen(os.dup(_file.fileno()), "rb")
        f.seek(0)
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return environ["wsgi.file_wrapper"](f)
    body = f"{environ['REQUEST_METHOD']} {path} {environ['QUERY_STRING']} ".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
