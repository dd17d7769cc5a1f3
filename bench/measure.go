package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// memorySampleEvery is the period of memory sampling during a run.
const memorySampleEvery = 250 * time.Millisecond

// runMeasure is what one measured run observed.
type runMeasure struct {
	wrk         wrkResult
	conns       uint64        // TCP connections accepted during the run (TcpPassiveOpens)
	masterCPU   time.Duration // CPU time the server's main process used during the run
	serverCPU   time.Duration // CPU time the whole server used during the run (servercpu.go)
	serverKnown bool          // serverCPU was read, before and after
	peakTree    memory        // largest total memory of the process tree seen
	peakMaster  memory        // largest memory of the main process seen
	peakProcs   int           // most processes seen in the tree
	held        uint64        // connections the master held from their start during the run (held.go)
	heldKnown   bool          // held was counted: a server of heldServers whose status answered
}

// heldShare returns the share of the run's connections that the master
// held, and false if it was not counted or no connection was accepted.
func (m runMeasure) heldShare() (float64, bool) {
	if !m.heldKnown || m.conns == 0 {
		return 0, false
	}
	return float64(m.held) / float64(m.conns), true
}

// masterCPUPer returns the main process's CPU time per connection for loads
// without keep-alive and per request with it, in microseconds.
func (m runMeasure) masterCPUPer(l load) float64 {
	denom := float64(m.conns)
	if l.keepAlive {
		denom = float64(m.wrk.requests)
	}
	if denom == 0 {
		return 0
	}
	return float64(m.masterCPU.Microseconds()) / denom
}

// serverPerRequest returns the whole server's CPU time per answered
// request in µs, and false if it was not read or nothing was answered.
func (m runMeasure) serverPerRequest() (float64, bool) {
	return perRequest(m.serverCPU, m.serverKnown, m.wrk.requests)
}

// measureRun runs wrk once against p for d while sampling the memory of its
// process tree, and reads the CPU time of its main process and of the
// whole server around it. It returns what it saw, or an error if wrk
// failed or the server's process vanished.
func measureRun(ctx context.Context, w wrkRunner, p *cpuServer, l load, d time.Duration) (runMeasure, error) {
	before := readSched(p.pid())
	opens, err := passiveOpens()
	if err != nil {
		return runMeasure{}, err
	}
	var m runMeasure
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { m.sampleMemory(p.pid(), stop) })
	m.serverCPU, m.serverKnown = p.cpuAround(func() { m.wrk, err = w.run(ctx, p.url(), l, d) })
	close(stop)
	wg.Wait()
	if err != nil {
		return runMeasure{}, err
	}
	if _, err := readStat(p.pid()); err != nil {
		return runMeasure{}, fmt.Errorf("%s: gone after the run: %w", p.name, err)
	}
	after := readSched(p.pid())
	opensAfter, err := passiveOpens()
	if err != nil {
		return runMeasure{}, err
	}
	m.masterCPU, m.conns = after.cpu-before.cpu, opensAfter-opens
	return m, nil
}

// sampleMemory records the peak memory of the tree rooted at pid until stop
// closes.
func (m *runMeasure) sampleMemory(pid int, stop <-chan struct{}) {
	tick := time.NewTicker(memorySampleEvery)
	defer tick.Stop()
	for {
		total, n := treeMemory(pid)
		master := processMemory(pid)
		m.peakTree.rss = max(m.peakTree.rss, total.rss)
		m.peakTree.pss = max(m.peakTree.pss, total.pss)
		m.peakMaster.rss = max(m.peakMaster.rss, master.rss)
		m.peakMaster.pss = max(m.peakMaster.pss, master.pss)
		m.peakProcs = max(m.peakProcs, n)
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}
