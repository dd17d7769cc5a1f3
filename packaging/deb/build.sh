#!/bin/sh
# build.sh [OUTDIR]: build the Debian packages of actd from this checkout,
# one binary package per language binding, all of one version:
#
#   python3-actd_<version>_all.deb                the WSGI server (python/actd)
#   libplack-handler-actd-perl_<version>_all.deb  the Plack handler (perl/lib)
#   actd_<version>_<arch>.deb                     the supervisor, units, docs
#
#   OUTDIR        where the .debs go (default: dist at the repository root)
#   ACTD_VERSION  package and binary version (default: the VERSION file); set
#                 it higher to build an upgrade for tests, e.g. 0.1.1 or 0.1.0-2
#   ACTD_ARCH     Debian architecture of actd, amd64 (default) or arm64
#   GO            the go command (default: go from PATH, else /usr/local/go/bin/go)
#
# Needs go, dpkg-deb and gzip; nothing from outside Debian. Progress goes to
# stderr; stdout lists the paths of the three .debs, one a line, in the
# order above: the last line is actd's.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$root/packaging
outdir=${1:-$root/dist}
version=${ACTD_VERSION:-$(cat "$root/VERSION")}
arch=${ACTD_ARCH:-amd64}

case $version in
[0-9]*) ;;
*) echo "build.sh: version \"$version\" must start with a digit" >&2; exit 64 ;;
esac
if printf '%s' "$version" | LC_ALL=C grep -q '[^A-Za-z0-9.+~-]'; then
	echo "build.sh: version \"$version\" may hold only A-Za-z0-9.+~-" >&2
	exit 64
fi
# A version without a Debian revision (0.1.0) is a native package, whose
# changelog is changelog.gz; with one (0.1.0-1) it is changelog.Debian.gz.
case $version in
*-*) changelog=changelog.Debian.gz ;;
*) changelog=changelog.gz ;;
esac
case $arch in
amd64 | arm64) ;;
*) echo "build.sh: ACTD_ARCH=$arch: want amd64 or arm64" >&2; exit 64 ;;
esac

if [ -z "${GO:-}" ]; then
	GO=$(command -v go || echo /usr/local/go/bin/go)
fi

# One timestamp for every file, so two builds of one commit are identical.
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null ||
		date -d "$(sed -n 's/^ -- .*>  //p' "$pkg/deb/changelog" | head -n 1)" +%s)
fi
export SOURCE_DATE_EPOCH

stages=$(mktemp -d)
trap 'rm -rf "$stages"' EXIT INT TERM
umask 022
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# The changelog gets an entry for a version it does not list yet (ACTD_VERSION).
# Its date is the build's timestamp, but always after the entry below it.
# All three packages come from the one source package actd and ship its
# changelog.
maintainer=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$pkg/deb/changelog" | head -n 1)
last=$(date -d "$(sed -n 's/^ -- .*>  //p' "$pkg/deb/changelog" | head -n 1)" +%s)
stamp=$((SOURCE_DATE_EPOCH > last ? SOURCE_DATE_EPOCH : last + 1))
{
	if ! head -n 1 "$pkg/deb/changelog" | grep -qF "actd ($version)"; then
		printf 'actd (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Build of version %s.\n\n' "$version"
		printf ' -- %s  %s\n\n' "$maintainer" "$(LC_ALL=C date -u -R -d "@$stamp")"
	fi
	cat "$pkg/deb/changelog"
} | gzip -9n >"$stages/changelog.gz"

# stage_package NAME: make $stages/NAME, the tree of package NAME, with DEBIAN/ and
# the copyright and changelog every binary package carries in
# /usr/share/doc/NAME (Debian policy 12.5 and 12.7).
stage_package() {
	install -d "$stages/$1/DEBIAN" "$stages/$1/usr/share/doc/$1"
	install -m 0644 "$pkg/deb/copyright" "$stages/$1/usr/share/doc/$1/copyright"
	install -m 0644 "$stages/changelog.gz" "$stages/$1/usr/share/doc/$1/$changelog"
}

# build_package NAME ARCH TEMPLATE: write DEBIAN/control from TEMPLATE, DEBIAN/md5sums,
# give every file the one timestamp, build OUTDIR/NAME_VERSION_ARCH.deb and
# print its path.
build_package() {
	dir=$stages/$1
	size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
	sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$2/" -e "s/@INSTALLED_SIZE@/$size/" \
		-e "s/@MAINTAINER@/$maintainer/" "$3" >"$dir/DEBIAN/control"
	(cd "$dir" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$dir/DEBIAN/md5sums"
	chmod 0644 "$dir/DEBIAN/control" "$dir/DEBIAN/md5sums"
	find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	dpkg-deb --root-owner-group -Zxz --build "$dir" "$outdir/${1}_${version}_$2.deb" >&2
	echo "$outdir/${1}_${version}_$2.deb"
}

# python3-actd: the Python package actd (python/actd, the WSGI server for
# actd children) where Debian's python3 finds it, as dh_python3 installs a
# pure module: sources only; postinst byte-compiles them with py3compile,
# prerm removes the .pyc with py3clean (packaging/README.md, "Python").
stage_package python3-actd
py=$stages/python3-actd
install -d "$py/usr/lib/python3/dist-packages/actd"
install -m 0644 "$root"/python/actd/*.py "$py/usr/lib/python3/dist-packages/actd/"
gzip -9n <"$root/docs/python.md" >"$py/usr/share/doc/python3-actd/python.md.gz"
install -m 0755 "$pkg/deb/python3-actd.postinst" "$py/DEBIAN/postinst"
install -m 0755 "$pkg/deb/python3-actd.prerm" "$py/DEBIAN/prerm"
build_package python3-actd all "$pkg/deb/python3-actd.control.in"

# libplack-handler-actd-perl: the Perl Plack handler (docs/perl.md) and its
# Actd::* modules, where Debian's Perl keeps architecture-independent
# modules (perl policy 2.3, vendor directory), so `plackup -s Actd` finds it
# without PERL5LIB. Every .pm under perl/lib goes, in the same place.
stage_package libplack-handler-actd-perl
pl=$stages/libplack-handler-actd-perl
(cd "$root/perl/lib" && find . -name '*.pm' | LC_ALL=C sort) | while read -r pm; do
	install -D -m 0644 "$root/perl/lib/$pm" "$pl/usr/share/perl5/$pm"
done
gzip -9n <"$root/docs/perl.md" >"$pl/usr/share/doc/libplack-handler-actd-perl/perl.md.gz"
build_package libplack-handler-actd-perl all "$pkg/deb/libplack-handler-actd-perl.control.in"

# actd: the supervisor, its units, configuration, man page and docs.
# GOWORK=off: the product module alone, as `go install` builds it, never
# with the versions the benchmark suite's module (go.work) might select.
stage_package actd
bin=$stages/actd
echo "build.sh: go build actd $version ($arch)" >&2
(cd "$root" && GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build -trimpath \
	-ldflags "-s -w -X main.version=$version" -o "$bin/usr/bin/actd" ./cmd/actd)

install -d "$bin/usr/lib/systemd/system" "$bin/etc/actd" "$bin/usr/share/man/man8"
install -m 0644 "$pkg/systemd/actd.socket" "$pkg/systemd/actd.service" \
	"$pkg/systemd/actd@.socket" "$pkg/systemd/actd@.service" \
	"$bin/usr/lib/systemd/system/"
install -m 0644 "$pkg/etc/actd.conf" "$pkg/etc/example.conf" "$bin/etc/actd/"
gzip -9n <"$pkg/man/actd.8" >"$bin/usr/share/man/man8/actd.8.gz"
install -m 0644 "$pkg/README.md" "$bin/usr/share/doc/actd/README.md"
# The docs a worker author and an operator need offline, compressed as
# Debian policy 12.3 asks of files over 4 kB (zless, or zcat | less).
for doc in protocol operations architecture go http; do
	gzip -9n <"$root/docs/$doc.md" >"$bin/usr/share/doc/actd/$doc.md.gz"
done
install -D -m 0644 "$pkg/deb/lintian-overrides" "$bin/usr/share/lintian/overrides/actd"
install -m 0755 "$pkg/deb/postinst" "$pkg/deb/prerm" "$pkg/deb/postrm" "$bin/DEBIAN/"
install -m 0644 "$pkg/deb/conffiles" "$bin/DEBIAN/conffiles"
build_package actd "$arch" "$pkg/deb/control.in"
