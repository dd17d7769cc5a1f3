package packaging

import "runtime"

// canRun reports whether this machine runs binaries built for debArch.
func canRun() bool { return runtime.GOOS == "linux" && runtime.GOARCH == debArch }
