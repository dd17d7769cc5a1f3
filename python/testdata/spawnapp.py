"""A WSGI application that starts a program in the background in a way that
passes on every fd not marked close-on-exec (subprocess with
close_fds=False), and answers its PID (grandchild_test.go)."""

import subprocess


def app(environ, start_response):
    child = subprocess.Popen(["sleep", "60"], close_fds=False)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"%d" % child.pid]
