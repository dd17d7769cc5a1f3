package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// readyTimeout bounds how long a server may take to answer its first request.
const readyTimeout = 20 * time.Second

// stopTimeout bounds how long a server may take to exit after SIGTERM
// before its process group is killed.
const stopTimeout = 15 * time.Second

// serverProc is one running server under test.
type serverProc struct {
	name string
	cmd  *exec.Cmd
	port int
	path string // URL path to request
	log  string // file with the server's stdout and stderr
	done chan struct{}
	err  error                  // Wait's result, set before done closes
	held func() (uint64, error) // the master's held-from-their-start counter (held.go), or nil
}

// startServer starts server name for s in its own process group, with its
// output in a log file in s.dir, and waits until it answers an HTTP request.
// It returns the running server, or an error if it cannot start, exits, or
// does not answer within readyTimeout (the server is then stopped).
func startServer(name string, t *tools, s setup) (*serverProc, error) {
	return startServerIn(name, t, s, nil)
}

// startServerIn is startServer with the server started in group g
// (cgroupcpu.go) before it can start any child, if g is not nil. The
// caller removes g after stopping the server.
func startServerIn(name string, t *tools, s setup, g *cpuGroup) (*serverProc, error) {
	cmd, path, err := command(name, t, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if g != nil {
		g.wrap(cmd)
	}
	logPath := filepath.Join(s.dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", name, err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	p := &serverProc{name: name, cmd: cmd, port: s.port, path: path, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	probe := getOnce
	if f := issue24Probe(name, t); f != nil { // HTTPS or a PROXY header first
		probe = f
	}
	if err := p.waitReady(probe); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w; log:\n%s", name, err, p.logTail())
	}
	settle(name, p.pid())
	return p, nil
}

// pid is the server's main (master) process ID.
func (p *serverProc) pid() int { return p.cmd.Process.Pid }

// url is the address wrk loads.
func (p *serverProc) url() string { return "http://" + addr(p.port) + p.path }

// waitReady polls with probe (getOnce: HTTP requests) until one is
// answered with status 200. It returns nil then, or an error if the
// server exits or readyTimeout passes.
func (p *serverProc) waitReady(probe func(address, path string) error) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := probe(addr(p.port), p.path)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before answering: %v", p.err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %v: %w", readyTimeout, err)
		}
	}
}

// getOnce sends one GET with Connection: close and checks for status 200.
// It returns nil or what went wrong.
func getOnce(address, path string) error {
	conn, err := net.DialTimeout("tcp", address, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		return err
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") && !strings.HasPrefix(status, "HTTP/1.0 200") {
		return fmt.Errorf("status line %q", strings.TrimSpace(status))
	}
	return nil
}

// stop sends SIGTERM to the server's main process and waits for it to exit;
// after stopTimeout it kills the whole process group. Then it gives the
// rest of the group a second to go and kills whatever is left (the group
// was created for this server, so it holds only processes the suite
// started). It returns nil after a clean stop, or an error saying what had
// to be killed.
func (p *serverProc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	var errs []error
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		errs = append(errs, fmt.Errorf("%s ignored SIGTERM for %v; killed its process group", p.name, stopTimeout))
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
	deadline := time.Now().Add(time.Second)
	for left := groupMembers(p.pid()); len(left) > 0; left = groupMembers(p.pid()) {
		if time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("%s left %d processes running a second after it exited (PIDs %v); killed them", p.name, len(left), left))
			_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.Join(errs...)
}

// logTail returns the last lines of the server's log.
func (p *serverProc) logTail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}
