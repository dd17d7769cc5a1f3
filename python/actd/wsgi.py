"""A WSGI server (PEP 3333) for actd children.

    actd --listen 127.0.0.1:8080 -- python3 -m actd.wsgi [OPTIONS] MODULE:APP

Each child imports MODULE, takes APP from it (an attribute path, or a
call such as create_app() with no arguments; "application" if left out),
and serves HTTP/1.1 with keep-alive and pipelining, one connection at a
time, under actd's dispatch or exclusive accept mode. Errors in the
application are logged with their traceback, one journal entry at
priority err under systemd (stderr elsewhere), and answered with 500 where the response has not begun.
"""

import argparse
import faulthandler
import importlib
import os
import signal
import sys
import time
import traceback

from . import accesslog, exact, fds, forwarded, http, journal, zygote
from .connection import Connection
from .offload import Finisher, offloading
from .response import FileWrapper, Response

ERROR_BODY = {
    "400": b"Bad Request\n",
    "413": b"Content Too Large\n",
    "414": b"URI Too Long\n",
    "431": b"Request Header Fields Too Large\n",
    "500": b"Internal Server Error\n",
    "501": b"Not Implemented\n",
    "505": b"HTTP Version Not Supported\n",
}
DISCARD_LIMIT = 65536  # unread body bytes drained to keep a connection open
# environ's key for each request header name; env_key adds the others
ENV_KEYS = {"CONTENT-TYPE": "CONTENT_TYPE", "CONTENT-LENGTH": "CONTENT_LENGTH"}
ENV_KEYS_LIMIT = 1024  # names remembered, so strange ones cannot grow the table for ever
TEMPLATES_LIMIT = 64  # listener addresses whose environ template is kept
# what the application may raise that is the client's or the request's, not its own
PASS_ON = (http.BadRequest, http.ClientGone, ConnectionError, BlockingIOError, TimeoutError)
LOGGED = "logged"  # an outcome's error: the application failed, and that was logged (_call)


class Options:
    """The server's settings, with their defaults (see main's --help)."""

    def __init__(self, keep_alive=5.0, timeout=30.0, head_limit=http.HEAD_LIMIT,
                 script_name="", max_body=None, forwarded_allow=()):
        self.keep_alive = keep_alive  # seconds between requests; 0: no keep-alive
        self.timeout = timeout  # seconds a read or write of a request may wait
        self.head_limit = head_limit
        self.script_name = script_name
        self.max_body = max_body  # bytes of a request body, else 413; None: no limit
        self.forwarded_allow = forwarded_allow  # networks whose X-Forwarded-* count (actd.forwarded)


class Standalone:
    """The connection hooks for a server that runs without actd (tests)."""

    def request(self, text):
        pass

    def request_done(self):
        pass

    ahead = 0  # bytes before the request the first read drops (a Worker's PROXY header)

    def arrived(self):
        return False

    def wait_next(self, fd, timeout):
        import select
        return bool(select.select([fd], [], [], timeout)[0])


class Server:
    """Serves connections to one WSGI application.

    hooks (an actd.worker.Worker, or Standalone) hears about each request
    and decides how long to wait for the next one on a connection;
    access_log (an actd.accesslog.AccessLog, or None) gets a line for each
    request parsed.
    """

    def __init__(self, app, options=None, hooks=None, access_log=None):
        self.app = app
        self.options = options or Options()
        self.hooks = hooks or Standalone()
        self.access_log = access_log
        # an actd.tally.Recorder with no access log behind it: a request
        # is counted (add), with no Entry made and no wall clock read
        self.tally_only = getattr(access_log, "alone", False)
        self.response = None  # the request in hand's Response, once made
        self.finisher = None  # the connection in hand's actd.offload.Finisher, if it may offload
        self.refused = None  # (status, body bytes) of an error the server sent in its place
        self.base = {
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.file_wrapper": FileWrapper,
            "wsgi.input_terminated": True,
            "wsgi.input": http.EMPTY,
            "SCRIPT_NAME": self.options.script_name,
        }
        self.templates = {}  # listener address: base with SERVER_NAME and SERVER_PORT
        # the actd.lean.Lean that answers this server's plain requests, set
        # by whoever made it: serve_on then gives it a connection back at
        # a next request (no TLS); None: never
        self.lean = None

    def serve(self, sock, addr, local):
        """Serve requests on sock, a connected socket, until it closes, a
        request asks so, or keep-alive ends. local is (SERVER_NAME,
        SERVER_PORT). The caller closes sock. With self.lean, its next
        requests go the lean way when they can."""
        if self.serve_on(*self.open(sock, addr), local):
            self.lean.resume(sock, addr, local)

    def open(self, sock, addr, taken=None, buf=b""):
        """Return (conn, reader, remote), what serve_on reads and writes sock
        with, for a connection from addr; sets self.finisher for it.
        taken: the bytes a caller (actd.lean) read off sock already, else
        None: the first read is then done (the exact span counts them),
        and buf, what of them no request has used, is the reader's."""
        secure = getattr(self.hooks, "secure", False)  # sock is an ssl.SSLSocket
        if secure:
            from .tls import TLSConnection
            conn = TLSConnection(sock, self.options.timeout)
        else:
            conn = Connection(sock, self.options.timeout, taken is not None or self.hooks.arrived(), self.hooks.ahead)
        hooks = self.hooks  # a parkable one is an actd.worker.Worker
        span = exact.Span(hooks.seen, hooks.plain) if getattr(hooks, "parkable", False) else None
        reader = http.Reader(conn, span)
        if taken is not None:
            conn.read = True
            reader.buf = buf
            if span:
                span.took(len(taken))
        self.finisher = Finisher(hooks, conn.fd, reader) if offloading(hooks) else None
        return conn, reader, remote_address(addr)

    def serve_on(self, conn, reader, remote, local, first=None):
        """serve's loop, on what open returned: first, if given, answers
        the first request (begun by actd.lean) and returns whether the
        connection stays open; every other request is _one's. Returns
        True when a next request came, nothing of it read, on a
        connection self.lean may take (no TLS): the caller hands it to
        self.lean (actd.lean's TAKE), any PROXY header long read (so
        hooks.ahead is 0 from then on); None otherwise (the connection is
        over)."""
        secure = getattr(self.hooks, "secure", False)
        hooks = self.hooks
        span = reader.exact
        lean = self.lean is not None and not secure
        try:
            more = first() if first is not None else self._one(conn, reader, remote, local, secure)
            while more:
                if span and reader.buf and not span.whole(reader.buf):
                    return  # part of a next request read (a long chunked body): close
                if (not reader.buf and not (secure and conn.pending())
                        and not hooks.wait_next(conn.fd, self.options.keep_alive)):
                    return
                if lean and not reader.buf:
                    if getattr(hooks, "ahead", 0):
                        hooks.ahead = 0  # the first read took it (actd.connection)
                    return True  # the lean path's from here (actd.lean.Lean.resume)
                if span and not reader.buf:
                    span.begin(hooks.glimpse)
                more = self._one(conn, reader, remote, local, secure)
        except exact.NotWhole:
            hooks.give_back = True  # unread: the master holds it until whole
        except (http.ClientGone, ConnectionError, BlockingIOError, TimeoutError):
            return  # the client went away or stalled: nobody to answer

    def next_one(self, conn, reader, remote, local):
        """_one for a next request on a connection whose wait for it
        (hooks.wait_next) actd.lean did, with nothing of it read: begins
        exact reading at what the wait peeked, as serve_on's loop does."""
        if reader.exact:
            reader.exact.begin(self.hooks.glimpse)
        return self._one(conn, reader, remote, local)

    def _one(self, conn, reader, remote, local, secure=False):
        """Serve one request; return whether the connection stays open."""
        try:
            head = reader.head(self.options.head_limit)
            if head is None:
                return False
            request = http.parse(head)
        except http.BadRequest as err:
            send_error(conn, err.status, f"actd.wsgi: {err.status[:3]} from {remote[0]}: {err}")
            return False
        self.hooks.request(request.describe)
        self.response = self.refused = None
        began = None
        if self.access_log:
            began = (0.0 if self.tally_only else time.time(), time.monotonic_ns())
        client = remote  # (REMOTE_ADDR, REMOTE_PORT, scheme or None)
        if self.options.forwarded_allow:
            client = forwarded.resolve(self.options.forwarded_allow, remote[:2], request.headers)
        if secure and client[2] is None:
            client = (client[0], client[1], "https")
        try:
            return self._respond(conn, reader, request, client, local)
        finally:
            self.hooks.request_done()
            if began:
                self._log(request, client[0], began)

    def _log(self, request, client, began, status=None, sent=0):
        """Count request for the tally and write its access log line: what
        was sent to client (REMOTE_ADDR), how long since began (wall
        clock, monotonic ns) it took. status ("-": none sent) and sent
        (body bytes) are what the lean path sent (actd.lean), or None for
        the response in hand's (or the error sent in its place)."""
        if status is None:
            response = self.response
            if self.refused:
                status, sent = self.refused
            elif response is not None and response.sent:
                status, sent = response.status[:3], response.written
            else:
                status = "-"  # the client went away first
        micros = (time.monotonic_ns() - began[1]) // 1000
        if self.tally_only:
            if status != "-":  # as Recorder.log counts
                self.access_log.add(status, micros)
            return
        path, _, query = request.target.partition("?")
        self.access_log.log(accesslog.Entry(client, request.method, path, query, request.version, status,
                                            sent, micros, request.headers, began[0]))

    def _respond(self, conn, reader, request, client, local, begun=None):
        """Answer request from client, (address, port, scheme or None);
        return whether the connection stays open. begun: (environ, its
        Response, the outcome of the application's call, see _call), for
        a request actd.lean began (conn, reader and local are then not
        used)."""
        if begun is None:
            limit = self.options.max_body
            if limit is not None and request.length > limit:  # refused unread, at once
                self._refuse(conn, "413 Content Too Large",
                             f"actd.wsgi: 413 from {client[0]}: Content-Length {request.length} over {limit}")
                return False
            body = self._body(conn, reader, request)
            environ = self._environ(request, body, client, local)
            response = Response(conn, request, request.keep_alive and self.options.keep_alive > 0, self.finisher,
                                body)
            outcome = None
        else:
            environ, response, outcome = begun
            body = None
        self.response = response
        try:
            self._call(environ, response, outcome)
        except http.BadRequest as err:  # in the body, read by the application
            if not response.sent:
                self._refuse(response.conn, err.status, f"actd.wsgi: {err.status[:3]} from {client[0]}: {err}")
            return False
        if response.finished() or not response.complete():
            return False  # the master has the connection, or the body fell short
        return response.keep_alive and (body is None or body.discard(DISCARD_LIMIT))

    def answer_first(self, request, client, began, environ, response, outcome):
        """Answer a request actd.lean began (reported, and began, as _one
        does them; see _respond's begun), then end it as _one does; return
        whether the connection stays open."""
        self.refused = None
        try:
            return self._respond(None, None, request, client, None, (environ, response, outcome))
        finally:
            self.hooks.request_done()
            if began:
                self._log(request, client[0], began)

    def _body(self, conn, reader, request):
        """Return wsgi.input's Body for request, or None if it has none."""
        if not request.has_body():
            return None
        go = None
        if request.expect_continue:
            def go():  # not for a body begun: the master may have sent one (docs/protocol.md)
                if not reader.buf and not http.queued(conn):
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if request.chunked:
            return http.ChunkedBody(reader, go, self.options.head_limit, self.options.max_body)
        return http.LengthBody(reader, request.length, go)

    def _call(self, environ, response, outcome=None):
        """Run the application and send its response; a failure before the
        response began is answered with 500, any other closes the connection.
        outcome, if not None, is what the application did when actd.lean
        called it: (its result, None), (None, LOGGED) if it failed and that
        was logged, or (None, an exception of PASS_ON) to raise."""
        result = None
        try:
            if outcome is None:
                result = self.app(environ, response.start_response)
            else:
                result, error = outcome
                if error is LOGGED:
                    self._failed(response)
                    return
                if error is not None:
                    raise error
            if isinstance(result, FileWrapper) and response.status and response.send_file(result):
                response.end()
            else:
                response.finish(result)
        except PASS_ON:
            raise
        except Exception:
            log_error(environ)
            self._failed(response)
        finally:
            if hasattr(result, "close"):
                close_result(result, environ)

    def _failed(self, response):
        """After the application failed (logged): answer 500 if the
        response has not begun, else raise ClientGone (the connection is cut)."""
        if response.sent:
            raise http.ClientGone("the application failed after the response began")
        self._refuse(response.conn, "500 Internal Server Error", None)
        response.keep_alive = False

    def _refuse(self, conn, status, log):
        """send_error, noted for the access log in place of the response."""
        self.refused = (status[:3], send_error(conn, status, log))

    def _environ(self, request, body, client, local):
        """Return request's environ: a copy of local's template with the
        request's own keys (request_env; kept as request.env for a
        request parse may give again) and the client's; client is
        (REMOTE_ADDR, REMOTE_PORT, scheme or None)."""
        env = (self.templates.get(local) or self._template(local)).copy()
        if request.env is not None:
            env.update(request.env)
        elif request.seen:
            request.env = request_env(request, {})
            env.update(request.env)
        else:
            request_env(request, env)
        env["REMOTE_ADDR"] = client[0]
        env["REMOTE_PORT"] = client[1]
        if client[2]:
            env["wsgi.url_scheme"] = client[2]
        if body is not None:
            env["wsgi.input"] = body  # else the template's http.EMPTY
        return env

    def _template(self, local):
        """Return (and keep, for a few listeners) the environ keys every
        request on listener address local shares: base's, SERVER_NAME and
        SERVER_PORT."""
        template = dict(self.base, SERVER_NAME=local[0], SERVER_PORT=local[1])
        if len(self.templates) < TEMPLATES_LIMIT:
            self.templates[local] = template
        return template


def request_env(request, env):
    """Set in env (and return it) the environ keys request alone sets:
    REQUEST_METHOD, PATH_INFO, QUERY_STRING, RAW_URI, SERVER_PROTOCOL
    and one for each header (env_key), one by one (cheaper than a dict
    display)."""
    path, query = request.split_target()
    env["REQUEST_METHOD"] = request.method
    env["PATH_INFO"] = path
    env["QUERY_STRING"] = query
    env["RAW_URI"] = request.target
    env["SERVER_PROTOCOL"] = request.version
    for name, value in request.headers.items():
        key = ENV_KEYS.get(name) or env_key(name)
        if key:
            env[key] = value
    return env


def env_key(name):
    """Return environ's key for request header NAME: HTTP_NAME with "_"
    for "-", or "" for a name with "_" (X_Y would pass for X-Y: dropped,
    as gunicorn and nginx do)."""
    key = "" if "_" in name else "HTTP_" + name.replace("-", "_")
    if len(ENV_KEYS) < ENV_KEYS_LIMIT:
        ENV_KEYS[name] = key
    return key


def close_result(result, environ):
    try:
        result.close()
    except Exception:
        log_error(environ, "close()")


def log_error(environ, where="the application"):
    """Log the exception being handled, with its traceback, naming the
    request without its query string (it may carry tokens): one entry at
    priority err in the journal, with HTTP_METHOD, HTTP_PATH and
    REMOTE_ADDR (journal.error), plain lines on stderr elsewhere."""
    method, path = environ.get("REQUEST_METHOD", ""), environ.get("RAW_URI", "").partition("?")[0]
    text = f"actd.wsgi: error in {where} serving {method} {path} (pid {os.getpid()}):\n" + traceback.format_exc()
    journal.error(text, (("HTTP_METHOD", method), ("HTTP_PATH", path),
                         ("REMOTE_ADDR", environ.get("REMOTE_ADDR", ""))))


def send_error(conn, status, log):
    """Answer with status and a short text body, and close the connection.
    Returns the body's length."""
    if log:
        print(log, file=sys.stderr, flush=True)
    body = ERROR_BODY.get(status[:3], status[4:].encode() + b"\n")
    head = (f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n")
    try:
        conn.sendall(head.encode("latin-1") + body)
    except OSError:
        pass
    return len(body)


def remote_address(addr):
    """Return (REMOTE_ADDR, REMOTE_PORT, None) of an accepted connection's
    peer: the client as _environ takes it, with the listener's scheme."""
    if isinstance(addr, tuple):
        return str(addr[0]), str(addr[1]), None
    return "", "", None  # unix socket peers have no address


def max_body(environ):
    """Return the request body limit in bytes that ACTD_MAX_REQUEST_BODY
    sets (the master's --max-request-body), or None for no limit: the
    variable absent, 0, or not a number (then with a line to stderr)."""
    value = environ.get("ACTD_MAX_REQUEST_BODY", "")
    if not value:
        return None
    if not value.isdigit() or not value.isascii():
        print(f"actd.wsgi: ACTD_MAX_REQUEST_BODY={value!r} is not a number of bytes: no limit",
              file=sys.stderr, flush=True)
        return None
    return int(value) or None


def load(spec):
    """Return the application named by spec, "MODULE[:APP]".

    APP is an attribute path, "application" by default, or a call of one
    with no arguments ("create_app()"). Raises ImportError,
    AttributeError, or TypeError if the result is not callable.
    """
    module, _, name = spec.partition(":")
    name = name or "application"
    call = name.endswith("()")
    obj = importlib.import_module(module)
    for part in name.removesuffix("()").split("."):
        obj = getattr(obj, part)
    if call:
        obj = obj()
    if not callable(obj):
        raise TypeError(f"{spec}: {type(obj).__name__} is not a WSGI application")
    return obj


def arguments(argv):
    p = argparse.ArgumentParser(prog="python3 -m actd.wsgi",
                                description="Serve a WSGI application as an actd child.")
    p.add_argument("app", metavar="MODULE:APP", help="the application, e.g. myproject.wsgi:application")
    p.add_argument("--chdir", metavar="DIR", help="change to DIR and import from it")
    p.add_argument("--keep-alive", type=float, default=5.0, metavar="SECONDS",
                   help="wait this long for the next request on a connection (0: close after each)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="a client's read or write may stall this long (default 30)")
    p.add_argument("--limit-request-head", type=int, default=http.HEAD_LIMIT, metavar="BYTES",
                   help="largest request head (request line and fields), else 431")
    p.add_argument("--script-name", default=os.environ.get("SCRIPT_NAME", ""),
                   help="SCRIPT_NAME, the path the application is mounted at")
    p.add_argument("--forwarded-allow-ips", default=os.environ.get("ACTD_FORWARDED_ALLOW_IPS", ""),
                   metavar="CIDR[,CIDR...]",
                   help="trust X-Forwarded-For and X-Forwarded-Proto from these networks (default: none)")
    return p.parse_args(argv)


def main(argv=None):
    """Entry point of python3 -m actd.wsgi."""
    from .worker import Worker
    from .tally import wrap as tallied  # each request counted for the master's metrics (actd.tally)
    fds.close_on_exec()  # before the application loads: what it runs gets no listener
    args = arguments(sys.argv[1:] if argv is None else argv)
    try:
        access_log = tallied(accesslog.from_environ(os.environ))
    except ValueError as err:
        raise SystemExit(f"actd.wsgi: ACTD_ACCESS_LOG_FORMAT: {err}") from None
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is the master's: it drains us
    faulthandler.register(signal.SIGQUIT, file=sys.stderr, all_threads=True)  # busy timeout
    if args.chdir:
        os.chdir(args.chdir)
    sys.path.insert(0, os.getcwd())
    try:
        allowed = forwarded.networks(args.forwarded_allow_ips)
    except ValueError as err:
        raise SystemExit(f"actd.wsgi: --forwarded-allow-ips: {err}") from None
    options = Options(args.keep_alive, args.timeout, args.limit_request_head, args.script_name,
                      max_body(os.environ), allowed)
    server = Server(load(args.app), options, access_log=access_log)

    def run_child():
        from . import lean
        if lean.fits(server):
            server.lean = lean.Lean(server)
        worker = Worker(server.serve, quick=server.lean.serve if server.lean is not None else None)
        if options.timeout > 0:
            worker.header_timeout = options.timeout
        server.hooks = worker
        worker.run()

    if zygote.is_zygote():  # --preload: the application is loaded, fork children from here
        zygote.serve(run_child)
        return
    run_child()


if __name__ == "__main__":
    main()
