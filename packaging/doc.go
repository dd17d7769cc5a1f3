// Package packaging holds no code: its tests check what actd ships to
// administrators, all of it under this directory.
//
//	systemd/  actd.socket, actd.service, actd@.socket, actd@.service
//	etc/      /etc/actd/actd.conf and /etc/actd/example.conf
//	man/      actd.8, the man page source
//	deb/      build.sh and the files of the Debian packages: actd,
//	          python3-actd and libplack-handler-actd-perl
//
// The tests parse the units and assert their directives, run
// systemd-analyze verify and security on them, build the .debs with
// deb/build.sh and inspect them with dpkg-deb and lintian, and compare the
// config examples and the man page with the flags of package config. A test
// whose tool is missing skips and names the Debian package to install.
package packaging
