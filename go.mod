module github.com/actd/actd

go 1.26.8

require (
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/godbus/dbus/v5 v5.2.4
	golang.org/x/sys v0.49.0
)
