package main

import (
	"fmt"
	"os"

	"github.com/actd/actd/config"
	"github.com/actd/actd/prefork/acceptfilter"
)

// runCheckConfig is `actd check-config FILE`: parse and validate FILE as
// `actd --config FILE` would, without running anything. It exits 78 for
// what it can know is wrong (preload for the built-in handler included),
// else 0 with notes on what only the worker's hello can tell.
func runCheckConfig(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: actd check-config FILE")
		return exitUsage
	}
	cfg, err := config.Parse([]string{"--config", args[0]})
	if err != nil {
		return configExit(err)
	}
	fmt.Printf("%s: ok\n", args[0])
	for _, note := range helloNotes(cfg) {
		fmt.Printf("%s: note: %s\n", args[0], note)
	}
	return exitOK
}

// helloNotes returns what cfg asks of a worker COMMAND that only its hello
// tells (docs/protocol.md, capabilities): nothing for the built-in handler,
// whose capabilities actd knows.
func helloNotes(cfg *config.Config) []string {
	if len(cfg.Worker) == 0 {
		return nil
	}
	const after = "only its hello tells: at start actd exits 78 without it, a reload into it fails and the old generation serves on"
	var notes []string
	if cfg.Pool.Preload {
		notes = append(notes, "preload: the worker's zygote must announce the fork capability; "+after)
	}
	if len(cfg.Pool.ProxyFrom) > 0 {
		notes = append(notes, "proxy-protocol-from: the worker must announce the proxy capability (protocol revision 6); "+after)
	}
	if cfg.Pool.Filter != acceptfilter.None {
		notes = append(notes, fmt.Sprintf("accept-filter %v: the worker must announce the handoff capability; %s", cfg.Pool.Filter, after))
	}
	if len(cfg.Pool.TLS) > 0 {
		notes = append(notes, "tls-cert: the worker must announce the tls capability (protocol revision 6); "+after)
	}
	return notes
}
