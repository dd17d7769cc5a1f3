// Package python holds no Go code: it is where the tests of the Python
// package actd (python/actd, a WSGI server for actd children) live, so that
// `go test ./...` runs them. The tests run real actd masters with real
// python3 children: the adapter's own unit tests (python3 -m unittest), an
// application wrapped in wsgiref.validate for every request kind, a Flask
// application and a Django project, in dispatch and exclusive mode, under
// an accept filter (handoff_test.go, screen_test.go: the children first,
// the master holding what is not ready; offload_test.go: slow readers'
// responses finished by the master), and --preload (preload_test.go: children forked from the zygote share its
// pages; a killed zygote is replaced; a reload brings a new one).
package python
