package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkConfigFile returns an *Error for key config if f (opened from name)
// is a directory: reading it would fail with "is a directory" on line 1.
func checkConfigFile(name string, f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return &Error{Key: "config", Err: err}
	}
	if info.IsDir() {
		return &Error{Key: "config", Err: fmt.Errorf("%s is a directory: want a file of key = value lines, such as /etc/actd/actd.conf", name)}
	}
	return nil
}

// CheckControlSocket returns an *Error for key control-socket if path
// exists and is not a unix socket (a directory, a file): actd removes only a
// stale socket there, never anything else. It returns nil for "", a path
// that does not exist yet, or a socket.
func CheckControlSocket(path string) error {
	if path == "" {
		return nil
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &Error{Key: "control-socket", Err: err}
	case info.IsDir():
		return &Error{Key: "control-socket", Err: fmt.Errorf("%s is a directory: want the path of a socket to create, such as %s",
			path, suggestSocketIn(path))}
	case info.Mode().Type() != fs.ModeSocket:
		return &Error{Key: "control-socket", Err: fmt.Errorf("%s exists and is not a socket: remove it, or give a path that is free or a stale socket", path)}
	}
	return nil
}

// suggestSocketIn is a socket path in directory dir.
func suggestSocketIn(dir string) string {
	if dir != "" && dir[len(dir)-1] == '/' {
		return dir + "actd.sock"
	}
	return dir + "/actd.sock"
}
