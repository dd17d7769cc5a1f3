// Package activation hands out the listening sockets of actd as raw file
// descriptors that the caller owns.
//
// The sockets come from systemd socket activation (LISTEN_FDS, LISTEN_PID and
// LISTEN_FDNAMES, read through go-systemd's activation package) or, when
// LISTEN_FDS is unset, from the --listen addresses ("host:port",
// "[v6]:port", "unix:/path").
//
// Contract:
//
//   - Every returned [Socket] holds a listening stream socket (SO_ACCEPTCONN is
//     set) on a fresh descriptor with close-on-exec set. The caller owns it and
//     closes it; nothing else in the process refers to it.
//   - The descriptor is never registered with the Go runtime's netpoller and
//     its blocking mode is left as it was: systemd's sockets keep the mode
//     systemd gave them, Listen's sockets are non-blocking as Go created them.
//     The package never calls (*os.File).Fd or (*net.TCPListener).File, which
//     can switch the shared open file description to blocking mode for every
//     process that holds it.
//   - Sockets keep their order: activation order for systemd, the order of the
//     addresses for Listen.
//
// The package knows nothing of the pool that uses the sockets.
package activation
