package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// poolSample is one look at a server during issue 21's window.
type poolSample struct {
	busy    int   // children busy (Apache: worker threads), as the server itself tells where it can
	known   bool  // busy was read
	bodies  int   // actd: connections held for their body
	sending int   // actd: responses the master finishes
	spooled int64 // actd: the data handed over with them (memfds and files)
	rss     uint64
}

// probeTimeout bounds one look at a server.
const probeTimeout = time.Second

// poolProbe returns how to look at server p (one of issue21Servers): actd
// through `actd status --json`, uWSGI through its stats socket, Apache
// through mod_status, gunicorn by the workers that hold a client
// connection (its arbiter does not tell).
func poolProbe(t *tools, p *serverProc, s setup) func() poolSample {
	busy := func() (poolSample, error) {
		inodes, err := countSockets(s.port)
		procs := tree(p.pid())
		if err == nil && len(procs) == 0 {
			err = fmt.Errorf("%s: gone", p.name)
		}
		if err != nil {
			return poolSample{}, err
		}
		return poolSample{busy: busyChildren(procs, inodes.inodes)}, nil
	}
	switch p.name {
	case "i21-actd", "i21-actd-nohold":
		busy = func() (poolSample, error) {
			out, err := exec.Command(t.actd, "status", "--json", "--control-socket", controlSocket(s)).Output()
			if err != nil {
				return poolSample{}, err
			}
			return actdSample(out)
		}
	case "i21-uwsgi":
		busy = func() (poolSample, error) {
			doc, err := readAll("unix", uwsgiStats(s), "")
			if err != nil {
				return poolSample{}, err
			}
			return uwsgiSample(doc)
		}
	case "i21-apache-event":
		busy = func() (poolSample, error) {
			doc, err := readAll("tcp", addr(s.port), "GET /server-status?auto HTTP/1.0\r\n\r\n")
			if err != nil {
				return poolSample{}, err
			}
			return apacheSample(doc)
		}
	}
	return func() poolSample {
		sample, err := busy()
		sample.known = err == nil
		sample.rss = processMemory(p.pid()).rss
		return sample
	}
}

// readAll connects to address, sends request and returns everything the
// peer sends until it closes, within probeTimeout.
func readAll(network, address, request string) ([]byte, error) {
	c, err := net.DialTimeout(network, address, probeTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := io.WriteString(c, request); err != nil {
		return nil, err
	}
	return io.ReadAll(c)
}

// actdSample reads `actd status --json`: busy children, bodies held,
// responses being finished and their data. It returns an error if doc is not JSON.
func actdSample(doc []byte) (poolSample, error) {
	var st struct {
		Pool struct {
			Busy int `json:"busy"`
			Held *struct {
				Bodies       int   `json:"bodies"`
				Sending      int   `json:"sending"`
				SendingBytes int64 `json:"sending_bytes"`
			} `json:"held"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		return poolSample{}, fmt.Errorf("actd status: %w", err)
	}
	s := poolSample{busy: st.Pool.Busy}
	if h := st.Pool.Held; h != nil {
		s.bodies, s.sending, s.spooled = h.Bodies, h.Sending, h.SendingBytes
	}
	return s, nil
}

// uwsgiSample counts the workers uWSGI's stats document calls busy. It
// returns an error if doc is not JSON.
func uwsgiSample(doc []byte) (poolSample, error) {
	var st struct {
		Workers []struct {
			Status string `json:"status"`
		} `json:"workers"`
	}
	if err := json.Unmarshal(doc, &st); err != nil {
		return poolSample{}, fmt.Errorf("uwsgi stats: %w", err)
	}
	var s poolSample
	for _, w := range st.Workers {
		if w.Status == "busy" {
			s.busy++
		}
	}
	return s, nil
}

// apacheSample reads BusyWorkers from mod_status's ?auto answer, less the
// worker answering it. It returns an error if the answer has none.
func apacheSample(doc []byte) (poolSample, error) {
	sc := bufio.NewScanner(strings.NewReader(string(doc)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "BusyWorkers: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return poolSample{}, fmt.Errorf("server-status: BusyWorkers %q", v)
			}
			return poolSample{busy: max(0, n-1)}, nil
		}
	}
	return poolSample{}, fmt.Errorf("server-status: no BusyWorkers line in %.80q", doc)
}
