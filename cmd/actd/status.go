package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// runStatus is `actd status [--json] [--control-socket PATH] [NAME]`.
func runStatus(args []string) int {
	fs := flag.NewFlagSet("actd status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the raw status document")
	path := fs.String("control-socket", "", "`PATH` of the pool's control socket (default: NAME's, else /run/actd/control.sock)")
	if code, done := subcommandFlags(fs, args, "[--json] [--control-socket PATH] [NAME]"); done {
		return code
	}
	sock := statusSocket(*path, fs.Arg(0))
	raw, err := fetchStatus(sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd status: %s: %v\n", sock, dialReason(err))
		fmt.Fprintln(os.Stderr, statusHint(err))
		return exitFailure
	}
	if *asJSON {
		os.Stdout.Write(raw)
		return exitOK
	}
	var doc struct {
		statusDoc
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		fmt.Fprintf(os.Stderr, "actd status: %s: %v\n", sock, err)
		return exitFailure
	}
	if doc.Error != "" {
		fmt.Fprintf(os.Stderr, "actd status: the master does not answer: %s\n", doc.Error)
		return exitFailure
	}
	printStatus(os.Stdout, doc.statusDoc, unitView(doc.Unit))
	return exitOK
}

// statusSocket picks the control socket: the flag, the named pool's
// (actd@NAME.service uses RuntimeDirectory=actd-NAME), the current
// RUNTIME_DIRECTORY's, or the default instance's.
func statusSocket(flagPath, name string) string {
	switch {
	case flagPath != "":
		return flagPath
	case name != "":
		return filepath.Join("/run", "actd-"+name, "control.sock")
	}
	if p := controlPath(""); p != "" {
		return p
	}
	return "/run/actd/control.sock"
}

// statusHint is what to try after the status request failed with err.
func statusHint(err error) string {
	if errors.Is(err, syscall.EAGAIN) {
		return "actd runs, but its control socket stays busy (many status clients at once?): try again"
	}
	return "is actd running? pass NAME for actd@NAME, or --control-socket PATH for a pool started by hand"
}

// dialReason is err without the address net.OpError repeats, e.g.
// "connect: no such file or directory".
func dialReason(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

func fetchStatus(path string) ([]byte, error) {
	return request(path, "status", 5*time.Second)
}

// unitView is what systemd says of the unit, over D-Bus; "" if there is no
// system bus or no unit.
func unitView(unit string) string {
	if unit == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return ""
	}
	defer conn.Close()
	props, err := conn.GetAllPropertiesContext(ctx, unit)
	if err != nil {
		return ""
	}
	svc, _ := conn.GetUnitTypePropertiesContext(ctx, unit, "Service")
	view := fmt.Sprintf("%s: %v (%v), %v restarts", unit, props["ActiveState"], props["SubState"], svc["NRestarts"])
	if ts, ok := svc["WatchdogTimestamp"].(uint64); ok && ts > 0 {
		view += fmt.Sprintf(", last watchdog %v ago", time.Since(time.UnixMicro(int64(ts))).Round(time.Second))
	}
	return view
}

// printStatus writes the scoreboard for a person.
func printStatus(w io.Writer, d statusDoc, systemd string) {
	s := d.Snapshot
	fmt.Fprintf(w, "actd %s, master pid %d, %s mode, generation %d\n", d.Version, d.PID, s.Mode, s.Generation)
	if systemd != "" {
		fmt.Fprintln(w, "systemd:", systemd)
	}
	fmt.Fprintln(w, "pool:", statusLine(s, d.Rate))
	if d.Note != "" {
		fmt.Fprintln(w, "note:", d.Note)
	}
	var qs []string
	for _, l := range s.Listeners {
		q := "?"
		if l.Queue >= 0 {
			q = fmt.Sprint(l.Queue)
		}
		qs = append(qs, l.Name+"="+q)
	}
	fmt.Fprintf(w, "accept queues: %s\n", strings.Join(qs, " "))
	if h := s.Held; h != nil {
		fmt.Fprintf(w, "held (accept filter %s): %d of max %d: %d waiting, %d ready, %d parked; oldest %v; %d held in all, %d handed over, %d hold timeouts, %d shed, %d closed by the client, %d parked in all\n",
			h.Filter, h.Held, h.Max, h.Held-h.Ready-h.Parked, h.Ready, h.Parked, h.Oldest.Round(time.Millisecond),
			s.Stats.Held, s.Stats.Handoffs, s.Stats.HoldTimeouts, s.Stats.Shed, s.Stats.HeldClosed, s.Stats.Parked)
		fmt.Fprintf(w, "finished by the master: %d responses, %s of data, %s left; oldest %v; %d waiting for a child; %d handed over, %d finished, %d failed, %d send timeouts, %d over --offload-total\n",
			h.Sending, sizeText(uint64(max(h.SendingBytes, 0))), sizeText(uint64(max(h.SendingLeft, 0))), h.SendingOldest.Round(time.Millisecond),
			h.Refused, s.Stats.Finishing, s.Stats.Finished, s.Stats.FinishFailed, s.Stats.SendTimeouts, s.Stats.OverTotal)
		if h.ProxyHeaders > 0 || h.ProxyFailed > 0 {
			fmt.Fprintf(w, "PROXY headers: %d read, %d connections closed for a bad or late one\n", h.ProxyHeaders, h.ProxyFailed)
		}
		if h.Filter == "http" {
			fmt.Fprintf(w, "bodies held: %d (%d bytes in); %d handed over at --hold-body, %d with a full receive queue, %d stalled; %d 100 Continue sent\n",
				h.Bodies, h.BodyBytes, h.BodyBound, h.BodyFull, h.BodyStalled, h.Continues)
		}
	}
	if z := s.Zygote; z != nil {
		fmt.Fprintf(w, "zygote (preload): pid %d, generation %d, %s for %v; rss %s, cpu %.2fs; %d forks, %d in all, %d restarts\n",
			z.PID, z.Generation, z.State, s.Taken.Sub(z.Since).Round(time.Millisecond), sizeText(z.Memory), z.CPU,
			z.Forks, z.Forked, z.Restarts)
	}
	st := s.Stats
	fmt.Fprintf(w, "totals: %d served, %d spawned, %d respawned, %d hung, %d recycled, %d overloads, %d garbage, %d reloads\n",
		st.Served, st.Spawned, st.Respawned, st.Hung, st.Recycled, st.Overloads, st.Garbage, st.Reloads)
	fmt.Fprintf(w, "memory: %d recycled over --max-child-memory, %d OOM-killed\n", st.MemRecycled, st.OOMKilled)
	if line := requestsLine(s); line != "" { // requests.go
		fmt.Fprintln(w, "requests:", line)
	}
	fmt.Fprintln(w, "states: S starting, I idle, A ordered to accept, B busy, R running, D draining, K killed, E exiting")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tSTATE\tPID\tGEN\tSERVED\tFOR\tRSS\tCPU\tREQUEST")
	for _, sl := range s.Slots {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%v\t%s\t%.2fs\t%s\n", sl.Slot, sl.State, sl.PID, sl.Generation, sl.Served,
			s.Taken.Sub(sl.Since).Round(time.Millisecond), sizeText(sl.Memory), sl.CPU, printable(sl.Request))
	}
	tw.Flush()
}

// printable returns s with control characters replaced, for a terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// sizeText writes n bytes the way free(1) -h does: 512K, 23.4M, 1.2G;
// "-" for a child not measured yet.
func sizeText(n uint64) string {
	switch {
	case n == 0:
		return "-"
	case n < 1<<20:
		return fmt.Sprintf("%dK", n>>10)
	case n < 1<<30:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
}
