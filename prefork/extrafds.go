package prefork

import "github.com/actd/actd/protocol"

// extraFiles returns the fds a child of the current generation gets after
// the back-channel, in the order of protocol/fds.go: the access-log file,
// if any (accesslog.go), then the TLS memfds (tlsfds.go). spawnAs appends
// them to the child's files.
func (p *Pool) extraFiles() []uintptr {
	files := make([]uintptr, 0, 1+len(p.tls.fds))
	if p.program.logFile != nil {
		files = append(files, p.program.logFile.Fd())
	}
	for _, fd := range p.tls.fds {
		files = append(files, uintptr(fd))
	}
	return files
}

// extraEnv returns the environment entries naming the TLS memfds among
// extraFiles' fds (operatorEnv names the access log's).
func (p *Pool) extraEnv() []string {
	first := protocol.FirstExtraFD(len(p.listeners), p.cfg.Mode.SpeaksProtocol())
	if p.program.logFile != nil {
		first++
	}
	if e := p.tls.env(first); e != "" {
		return []string{e}
	}
	return nil
}
