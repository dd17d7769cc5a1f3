"""actd: run Python applications under the actd prefork supervisor.

Standard library only. The package holds the worker side of actd's
back-channel protocol (docs/protocol.md) and a WSGI server built on it:

    actd --listen 127.0.0.1:8080 -- python3 -m actd.wsgi myapp:app

Modules, one concept each:

    actd.channel     the back-channel: message codec, send and receive
    actd.report      what the master hears about connections (B, I, S, R)
    actd.worker      the accept loops of dispatch and exclusive mode, and
                     children first under an accept filter
    actd.screen      is an accepted connection ready? the filter's rule
    actd.connection  a client connection: reads and writes under --timeout
    actd.http        HTTP/1.x request heads and bodies, read from a connection
    actd.response    start_response and the response on the wire
    actd.offload     a slow reader's response handed to the master (W)
    actd.unsent      one the master gave back, written by the child (U)
    actd.wsgi        the WSGI server: environ, the application call, main()
    actd.lean        the lean path: a request like many before it (a head
                     kept, no body, a one-element answer) in a few frames
    actd.journal     priority err for the tracebacks it logs, under systemd;
                     native-protocol entries
    actd.accesslog   the access log: its format, to the journal or a file
    actd.proxy       PROXY protocol headers (v1, v2) from trusted balancers
    actd.forwarded   X-Forwarded-For and -Proto from trusted proxies
    actd.tls         TLS on the listeners actd names: contexts, handshake,
                     the ClientHello rule, connections read through TLS
    actd.zygote      actd --preload: the process that imported the application
                     forks the children on the master's order
"""

__version__ = "0.1.0"
