package protocol

// The fd layout of every child. Listener i is fd FirstListenerFD+i, as in
// systemd socket activation (SD_LISTEN_FDS_START); the back-channel follows
// the listeners. fds 0-2 are stdin (/dev/null), stdout and stderr (the
// master's). No other fd is open in a child when it starts.
const FirstListenerFD = 3

// ChannelFD returns the back-channel's fd in a child with n listeners.
func ChannelFD(n int) int { return FirstListenerFD + n }

// Extra fds follow the back-channel (in shared mode, which has none, the
// listeners), in this order: the access log's file, if any, then one TLS
// memfd per listener that terminates TLS, in listener order. The
// environment names each one's number (EnvTLS), so a worker never
// computes one.

// FirstExtraFD returns the first extra fd in a child with n listeners,
// with a back-channel or not.
func FirstExtraFD(n int, channel bool) int {
	if channel {
		return ChannelFD(n) + 1
	}
	return FirstListenerFD + n
}

// Environment variables the master sets for every child.
const (
	EnvProtocol      = "ACTD_PROTOCOL"      // the revision the master speaks, Version
	EnvChannelFD     = "ACTD_CHANNEL_FD"    // back-channel fd; absent in shared mode
	EnvMode          = "ACTD_ACCEPT_MODE"   // dispatch, exclusive or shared
	EnvSlot          = "ACTD_SLOT"          // the child's slot number
	EnvListenFDs     = "LISTEN_FDS"         // number of listeners
	EnvListenFDNames = "LISTEN_FDNAMES"     // listener names, colon-separated
	EnvListenPID     = "LISTEN_PID"         // set by the child itself before it execs a worker
	EnvRole          = "ACTD_ROLE"          // RoleZygote for the zygote under --preload; absent for a child that serves
	EnvFilter        = "ACTD_ACCEPT_FILTER" // data or http: the accept filter of a dispatch-mode pool; absent without one
	EnvOffloadMax    = "ACTD_OFFLOAD_MAX"   // the largest rest of a response the master finishes (Write), in bytes; absent: none
	EnvTLS           = "ACTD_TLS"           // INDEX=FD entries, space-separated: listener INDEX terminates TLS with the chain and key PEM in memfd FD; absent: no TLS
	EnvProxyFrom     = "ACTD_PROXY_FROM"    // INDEX=CIDR entries, space-separated: peers that must send a PROXY header; absent: none
)

// RoleZygote is EnvRole's value for the process that loads the application
// once and forks children on Fork orders (preload). It says hello with
// CapFork and takes no other order than Fork, Ping and Drain.
const RoleZygote = "zygote"

// MasterEnv lists the variables a child must not inherit from the master's
// own environment: systemd's, which are the master's, and the ones above,
// which the master sets afresh.
var MasterEnv = []string{
	"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "FDSTORE",
	EnvListenFDs, EnvListenFDNames, EnvListenPID,
	EnvProtocol, EnvChannelFD, EnvMode, EnvSlot, EnvRole, EnvFilter, EnvOffloadMax, EnvProxyFrom, EnvTLS,
	EnvAccessLog, EnvAccessLogFormat, EnvMaxRequestBody, // access.go
}
