package slowclient

import "strings"

// appTemplate is the WSGI application slow clients talk to (App).
const appTemplate = `import hashlib, os, tempfile

SIZE = @SIZE@
BODY = @BODY@
_file = tempfile.TemporaryFile()
_file.write(BODY)
_file.flush()


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/echo":
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    elif path == "/bytes":
        body = BODY
    elif path == "/file":
        f = os.fdopen(os.dup(_file.fileno()), "rb")
        f.seek(0)
        start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(SIZE))])
        return environ["wsgi.file_wrapper"](f)
    else:
        body = ("slot=%s pid=%d\n" % (os.environ.get("ACTD_SLOT", "0"), os.getpid())).encode()
    start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(body)))])
    return [body]
`

// App returns the source of a WSGI application for slow clients: POST
// /echo answers its body (Post), GET /bytes the size bytes of the Python
// expression body as one string and GET /file the same bytes from a file
// through wsgi.file_wrapper (Read), anything else the built-in handler's
// line ("slot=K pid=P"), so that a pool's readiness checks know it.
func App(size, body string) string {
	return strings.NewReplacer("@SIZE@", size, "@BODY@", body).Replace(appTemplate)
}
