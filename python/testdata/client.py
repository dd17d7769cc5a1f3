"""The test application of python/edge_test.go: every answer is the
client's address and port and the URL scheme, as the adapter saw them
(REMOTE_ADDR, REMOTE_PORT, wsgi.url_scheme), and the serving process."""

import os


def app(environ, start_response):
    body = "{} {} {} pid={}\n".format(
        environ.get("REMOTE_ADDR", "-"), environ.get("REMOTE_PORT", "-"), environ["wsgi.url_scheme"], os.getpid()
    ).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
