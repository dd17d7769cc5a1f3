// Package integration proves actd where it lives: installed from its .deb and
// run by a real systemd.
//
// The tests are behind the build tag "integration" and need root:
//
//	go test -tags integration -count=1 ./test/integration/
//
// Each test boots its own throwaway systemd ("a box") as PID 1 of fresh PID,
// mount, UTS, IPC and cgroup namespaces (systemd must never see the host's
// root filesystem: its tmpfiles would empty the host's /tmp):
//
//  1. a new cgroup-v2 directory for the box under the host's cgroup-v2 mount
//     (found in /proc/self/mountinfo: /sys/fs/cgroup on a pure-v2 host,
//     /sys/fs/cgroup/unified on a hybrid one); unshare starts inside it;
//  2. unshare --pid --fork --mount --uts --ipc --cgroup --kill-child runs a
//     boot script that mounts an overlay of / whose upper layer is a tmpfs,
//     gives it fresh /proc (with /proc/sys read-only, so the box cannot change
//     the host's sysctls), /sys, /sys/fs/cgroup (cgroup2), /dev, /run and /tmp,
//     empties the host's /etc/systemd/system/*.wants so host services do not
//     start, removes a Docker-style /usr/sbin/policy-rc.d (it would keep
//     maintainer scripts from starting or stopping units), and pivot_roots
//     into it. Only then, after checking that / is the
//     overlay and making the box's own mounts shared (systemd in a
//     container leaves propagation as it finds it, and LoadCredential=
//     reaches a unit only through shared propagation), does it exec
//     /usr/lib/systemd/systemd. systemd never sees the
//     host's root: its tmpfiles would otherwise empty the host's /tmp;
//  3. the harness waits until `systemctl is-system-running` in the box says
//     running or degraded.
//
// A box with BoxConfig.Memory enforces MemoryMax=: on a hybrid host it also
// joins v1 memory and name=systemd cgroups of its own and mounts them, so
// its systemd runs in the hybrid layout (memorybox_test.go).
//
// The box shares the host's network namespace: a test picks a free port on
// 127.0.0.1, puts it into a socket drop-in, and its client loops (bounded in
// count and time) connect from the host.
//
// Inside a box: Box.Run (nsenter -t PID -a), Box.CopyIn / Box.WriteFile
// (through nsenter's stdin, never through /proc/PID/root, whose absolute
// symlinks would resolve on the host), and Box.Bus, a go-systemd D-Bus
// connection to the box's system bus at
// unix:path=/proc/PID/root/run/dbus/system_bus_socket.
//
// Teardown runs in t.Cleanup even when a test fails: SIGKILL to the box's
// PID 1 (which ends every process in the box and its mounts), then the box's
// cgroup directories are removed bottom-up. If the test binary itself dies,
// unshare dies with it (Pdeathsig) and --kill-child takes the box down.
//
// The packages are built once per run with packaging/deb/build.sh (it
// prints the paths of actd's .deb and of the adapters', python3-actd and
// libplack-handler-actd-perl); every box installs actd, a test that runs an
// adapter installs its package too (ActdBox.InstallPackage). The upgrade
// test builds a second set with ACTD_VERSION set.
//
// Requirements: root, util-linux (unshare, nsenter), systemd 252 or newer at
// /usr/lib/systemd/systemd, a writable cgroup-v2 hierarchy, Debian's dbus
// package (the box's system bus), dpkg-deb and go to build the package.
// A test that lacks one of them skips and says which.
package integration
