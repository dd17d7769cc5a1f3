package prefork_test

import (
	"context"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
)

// runRefused runs a pool of cfg whose children are the test worker name,
// on a fresh loopback listener, for a start that must stop the pool (a
// worker without a capability cfg needs), and returns what Run returned.
// A failed setup, or a Run still running 10 s after the start, fails t.
func runRefused(t *testing.T, cfg prefork.Config, name string) error {
	t.Helper()
	fd, _ := loopbackListener(t)
	cfg.Program = testProgram(name)
	p, err := prefork.New(cfg, []prefork.Listener{{Name: "test", FD: fd}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case err = <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run still running 10s after the hello: want it to stop")
		return nil
	}
}
