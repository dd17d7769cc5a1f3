package config

import "slices"

// KeepStartOnly handles the settings a reload cannot apply (the sockets,
// the log format and the http filter's body bound, set up once at start):
// it returns the keys whose value in next differs from running, and copies
// running's values into next, so next describes what actually runs. It
// returns nil if none differ. (accept and accept-filter are refused by the
// pool itself on reload.)
func KeepStartOnly(running, next *Config) []string {
	var keys []string
	if !slices.Equal(running.Listen, next.Listen) {
		keys = append(keys, "listen")
		next.Listen = running.Listen
	}
	if running.SocketMode != next.SocketMode {
		keys = append(keys, "socket-mode")
		next.SocketMode = running.SocketMode
	}
	if running.ControlSocket != next.ControlSocket {
		keys = append(keys, "control-socket")
		next.ControlSocket = running.ControlSocket
	}
	if running.MetricsListen != next.MetricsListen {
		keys = append(keys, "metrics-listen")
		next.MetricsListen = running.MetricsListen
	}
	if running.StatusPath != next.StatusPath {
		keys = append(keys, "status-path")
		next.StatusPath = running.StatusPath
	}
	if running.ControlGroup != next.ControlGroup {
		keys = append(keys, "control-group")
		next.ControlGroup = running.ControlGroup
	}
	if running.LogFormat != next.LogFormat {
		keys = append(keys, "log-format")
		next.LogFormat = running.LogFormat
	}
	if running.Pool.HoldBody != next.Pool.HoldBody { // the holder's bound, set with the filter at start
		keys = append(keys, "hold-body")
		next.Pool.HoldBody = running.Pool.HoldBody
	}
	return keys
}
