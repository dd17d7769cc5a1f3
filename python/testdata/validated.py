"""The test application of python/wsgi_test.go, wrapped in wsgiref.validate:
a request that breaks PEP 3333 fails with 500 and a logged traceback.

    /echo    the method, path, query and body it read
    /stream  a generator of parts, without Content-Length
    /pid     the serving process
    /slow    sleeps until the file named by the query exists (at most 20 s)
    /hang    sleeps 60 s (for the busy timeout)
"""

import os
import time
from wsgiref.validate import validator


def _app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return iter([b"one ", b"two ", b"three"])
    if path == "/slow":
        deadline = time.monotonic() + 20
        while not os.path.exists(environ["QUERY_STRING"]) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif path == "/hang":
        time.sleep(60)
    if path == "/pid":
        body = str(os.getpid()).encode()
    else:
        body = f"{environ['REQUEST_METHOD']} {path} {environ['QUERY_STRING']} ".encode()
        body += environ["wsgi.input"].read(1 << 20)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


app = validator(_app)
