package prefork

import "github.com/actd/actd/protocol"

// extraFiles returns the fds a child of c gets after the back-channel, in
// the order of protocol/fds.go: the access-log file, if any
// (accesslog.go), then the TLS memfds (tlsfds.go). spawn appends them
// to the child's files.
func (c *childSpec) extraFiles() []uintptr {
	files := make([]uintptr, 0, 1+len(c.tls.fds))
	if c.program.logFile != nil {
		files = append(files, c.program.logFile.Fd())
	}
	for _, fd := range c.tls.fds {
		files = append(files, uintptr(fd))
	}
	return files
}

// extraEnv returns the environment entries naming the TLS memfds among
// extraFiles' fds, for a pool of listeners listeners that speaks the
// protocol or not (operatorEnv names the access log's).
func (c *childSpec) extraEnv(listeners int, speaks bool) []string {
	first := protocol.FirstExtraFD(listeners, speaks)
	if c.program.logFile != nil {
		first++
	}
	if e := c.tls.env(first); e != "" {
		return []string{e}
	}
	return nil
}
