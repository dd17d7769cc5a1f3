//go:build integration

package integration

// bootScript is run by bash as the first process of the box's new namespaces
// (unshare --pid --fork --mount --uts --ipc --cgroup); $1 is an empty
// directory for the box's root tmpfs, $2 the box's name, $3 "own" when the
// box has its own network namespace (unshare --net), $4 "hybrid" when the
// box joined v1 memory and name=systemd cgroups (memorybox_test.go), so
// that its systemd runs in the hybrid layout with a memory controller, and
// "v2" otherwise. It builds an overlay
// of the host's / with a tmpfs upper layer, pivot_roots into it and only
// then execs systemd: systemd must never see the host's root, or its
// tmpfiles empty the host's /tmp.
const bootScript = `set -eu
R=$1
if [ "$3" = own ]; then
	ip link set lo up
fi
mount --make-rprivate /
mount -t tmpfs -o size=4g,mode=700 tmpfs "$R"
mkdir -p "$R/upper" "$R/work" "$R/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$R/root"
M=$R/root
mount -t proc proc "$M/proc"
# The box shares the host's kernel: keep it from changing the host's sysctls.
mount --bind "$M/proc/sys" "$M/proc/sys"
mount -o remount,bind,ro "$M/proc/sys"
mount -t sysfs -o ro sysfs "$M/sys"
mount -t tmpfs -o mode=755 tmpfs "$M/sys/fs/cgroup"
if [ "$4" = hybrid ]; then
	mkdir "$M/sys/fs/cgroup/unified" "$M/sys/fs/cgroup/memory" "$M/sys/fs/cgroup/systemd"
	mount -t cgroup2 cgroup2 "$M/sys/fs/cgroup/unified"
	mount -t cgroup -o memory cgroup "$M/sys/fs/cgroup/memory"
	mount -t cgroup -o none,name=systemd cgroup "$M/sys/fs/cgroup/systemd"
else
	mount -t cgroup2 cgroup2 "$M/sys/fs/cgroup"
fi
mount -t tmpfs -o mode=755 tmpfs "$M/dev"
for d in null zero full random urandom tty; do
	touch "$M/dev/$d"
	mount --bind "/dev/$d" "$M/dev/$d"
done
mkdir -p "$M/dev/pts" "$M/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$M/dev/pts"
ln -s pts/ptmx "$M/dev/ptmx"
for t in dev/shm run tmp; do
	mount -t tmpfs tmpfs "$M/$t"
done
# Keep the box lean: none of the host's enabled services, timers or gettys.
for w in "$M"/etc/systemd/system/*.wants; do
	rm -f "$w"/*
done
# A Docker-built host forbids maintainer scripts to start or stop services
# (policy-rc.d exits 101); the box is a real system where they must.
rm -f "$M/usr/sbin/policy-rc.d"
cd "$M"
mkdir -p oldroot
pivot_root . oldroot
umount -l /oldroot
rmdir /oldroot 2>/dev/null || true
# The one rule: exec systemd only on the overlay root.
if ! awk '$5 == "/" { r = $0 } END { exit !(r ~ / - overlay /) }' /proc/self/mountinfo; then
	echo "box: / is not the overlay, refusing to start systemd" >&2
	exit 97
fi
echo "$2" > /etc/hostname
# systemd in a container leaves / as it finds it, but credentials
# (LoadCredential=) reach a unit's namespace only through shared
# propagation: share the box's own mounts, as container managers do. The
# host's are no peers of them (made private above).
mount --make-rshared /
export container=actd-it
exec ` + systemdBinary + ` --system --unit=multi-user.target
`
