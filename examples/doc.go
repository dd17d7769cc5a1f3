// Package examples holds actd worker programs written by hand against the
// back-channel protocol (docs/protocol.md), and the tests that run each of
// them under a real actd, in dispatch and exclusive mode but for the C
// worker (dispatch only):
//
//   - go-worker: a Go program on prefork/worker, a tiny HTTP responder.
//   - go-http: a net/http server run unchanged on worker.Listener, with
//     keep-alive and request reports.
//   - python-worker/worker.py: the protocol in plain Python 3, standard
//     library only, the same HTTP responder.
//   - c-worker/worker.c: a C worker in dispatch mode that finds its
//     sockets and their names with libsystemd's sd_listen_fds_with_names(),
//     built with gcc (cworker_test.go; skipped without gcc or
//     libsystemd-dev).
//   - testdata/worker-rev1.py: the Python worker as it was written against
//     protocol revision 1 (8-byte messages, no capabilities), kept unchanged
//     to show that such a worker keeps working wherever it can (everywhere
//     but under an accept filter, which needs the hand-off).
//
// All answer every request with "NAME slot=K pid=P" (the C worker with
// "c-worker name=SOCKET slot=K pid=P"), so curl shows which child served
// it. Run the tests with `go test ./examples/`; the Python cases skip when
// python3 is missing.
package examples
