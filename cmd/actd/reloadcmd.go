package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// runReload is `actd reload [--control-socket PATH] [NAME]`: it asks the
// running master to reload its configuration and waits until the new
// generation serves alone (every old child exited, or is finishing the
// connection in hand and takes no other) or has failed. It exits 0 when the
// new generation serves alone, 78 for a bad configuration or a setting the
// new worker cannot do (the key named: preload, accept-filter), 1 when the
// new generation did not start or the master could not be asked; the
// running pool keeps serving with the old generation whenever it fails.
func runReload(args []string) int {
	fs := flag.NewFlagSet("actd reload", flag.ContinueOnError)
	path := fs.String("control-socket", "", "`PATH` of the pool's control socket (default: NAME's, else /run/actd/control.sock)")
	if code, done := subcommandFlags(fs, args, "[--control-socket PATH] [NAME]"); done {
		return code
	}
	sock := statusSocket(*path, fs.Arg(0))
	raw, err := request(sock, "reload", reloadWait)
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd reload: %s: %v\n", sock, err)
		return exitFailure
	}
	var rep reloadReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		fmt.Fprintf(os.Stderr, "actd reload: %s: answer %q: %v\n", sock, raw, err)
		return exitFailure
	}
	if rep.Stopped {
		fmt.Fprintf(os.Stderr, "actd reload: failed, and no generation serves: %s\n", rep.Error)
		return exitFailure
	}
	if rep.Error != "" {
		fmt.Fprintf(os.Stderr, "actd reload: failed, the running pool keeps its old generation: %s\n", rep.Error)
		if rep.Key != "" {
			return exitConfig
		}
		return exitFailure
	}
	fmt.Printf("actd reload: generation %d serves alone, %d children up%s\n", rep.Generation, rep.Children, finishingText(rep.Finishing))
	return exitOK
}

// finishingText says how many old children finish their last connection,
// or nothing for none.
func finishingText(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 old child finishing its last connection"
	}
	return fmt.Sprintf("; %d old children finishing their last connection", n)
}
