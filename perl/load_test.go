package perl_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentClose: more clients than children, each request on its own
// connection, in both modes. Every request is answered; actd counts every
// connection served and logs no complaint. In dispatch mode connections
// wait for the two children, so the master sends keep-accepting orders:
// the handler serves the waiting connections after the first, counted in
// an S (TestKeepAcceptingReports checks the messages).
func TestConcurrentClose(t *testing.T) {
	const clients, perClient = 8, 40
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, "app.psgi", "--start-children", "2", "--min-children", "2",
				"--max-children", "2", "--min-spare", "1", "--max-spare", "2")
			client := &http.Client{Timeout: ioBound, Transport: &http.Transport{DisableKeepAlives: true}}
			var wg sync.WaitGroup
			errs := make(chan error, clients*perClient)
			for c := range clients {
				wg.Go(func() {
					for i := range perClient {
						errs <- getHello(client, p.addr, fmt.Sprintf("/hello?c=%d&i=%d", c, i))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			doc, err := p.WaitStatus(func(d statusDoc) bool { return d.Pool.Stats.Served == clients*perClient })
			if err != nil {
				t.Errorf("status: got %d served, want %d: %v", doc.Pool.Stats.Served, clients*perClient, err)
			}
			if mode == "dispatch" && doc.Pool.Stats.KeepOrders == 0 {
				t.Errorf("status: got no keep-accepting orders, want some (%d clients, 2 children)", clients)
			}
			for _, line := range p.complaints() {
				t.Errorf("actd log: got %s, want no complaint", line)
			}
		})
	}
}

// getHello sends one request for path and wants 200 and the hello body.
func getHello(client *http.Client, addr, path string) error {
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !pidRE.Match(b) {
		return fmt.Errorf("GET %s: got %d %q, %v, want 200 hello pid=N", path, resp.StatusCode, b, err)
	}
	return nil
}
