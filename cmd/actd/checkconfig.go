package main

import (
	"fmt"
	"os"

	"github.com/actd/actd/config"
)

// runCheckConfig is `actd check-config FILE`: parse and validate FILE as
// `actd --config FILE` would, without running anything.
func runCheckConfig(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: actd check-config FILE")
		return exitUsage
	}
	if _, err := config.Parse([]string{"--config", args[0]}); err != nil {
		return configExit(err)
	}
	fmt.Printf("%s: ok\n", args[0])
	return exitOK
}
