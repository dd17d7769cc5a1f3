#!/bin/sh
# build.sh [OUTDIR]: build actd_<version>_<arch>.deb from this checkout.
#
#   OUTDIR        where the .deb goes (default: dist at the repository root)
#   ACTD_VERSION  package and binary version (default: the VERSION file); set
#                 it higher to build an upgrade for tests, e.g. 0.1.1 or 0.1.0-2
#   ACTD_ARCH     Debian architecture, amd64 (default) or arm64
#   GO            the go command (default: go from PATH, else /usr/local/go/bin/go)
#
# Needs go, dpkg-deb and gzip; nothing from outside Debian. Progress goes to
# stderr; the last line on stdout is the path of the .deb.
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

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT INT TERM
umask 022
chmod 0755 "$stage"

# GOWORK=off: the product module alone, as `go install` builds it, never
# with the versions the benchmark suite's module (go.work) might select.
echo "build.sh: go build actd $version ($arch)" >&2
(cd "$root" && GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build -trimpath \
	-ldflags "-s -w -X main.version=$version" -o "$stage/usr/bin/actd" ./cmd/actd)

install -d "$stage/usr/lib/systemd/system" "$stage/etc/actd" \
	"$stage/usr/share/man/man8" "$stage/usr/share/doc/actd" "$stage/DEBIAN"
install -m 0644 "$pkg/systemd/actd.socket" "$pkg/systemd/actd.service" \
	"$pkg/systemd/actd@.socket" "$pkg/systemd/actd@.service" \
	"$stage/usr/lib/systemd/system/"
install -m 0644 "$pkg/etc/actd.conf" "$pkg/etc/example.conf" "$stage/etc/actd/"
gzip -9n <"$pkg/man/actd.8" >"$stage/usr/share/man/man8/actd.8.gz"
install -m 0644 "$pkg/deb/copyright" "$stage/usr/share/doc/actd/copyright"
install -m 0644 "$pkg/README.md" "$stage/usr/share/doc/actd/README.md"
# The docs a worker author and an operator need offline, compressed as
# Debian policy 12.3 asks of files over 4 kB (zless, or zcat | less).
for doc in protocol operations architecture go; do
	gzip -9n <"$root/docs/$doc.md" >"$stage/usr/share/doc/actd/$doc.md.gz"
done
install -D -m 0644 "$pkg/deb/lintian-overrides" "$stage/usr/share/lintian/overrides/actd"
# The Python package actd (python/actd, the WSGI server for actd children)
# where Debian's python3 finds it, as dh_python3 installs a pure module:
# sources only; postinst byte-compiles them with py3compile, prerm removes
# the .pyc with py3clean (packaging/README.md, "Python").
install -d "$stage/usr/lib/python3/dist-packages/actd"
install -m 0644 "$root"/python/actd/*.py "$stage/usr/lib/python3/dist-packages/actd/"
gzip -9n <"$root/docs/python.md" >"$stage/usr/share/doc/actd/python.md.gz"

# The Perl Plack handler (docs/perl.md), where Debian's Perl keeps
# architecture-independent modules (perl policy 2.3, vendor directory), so
# `plackup -s Actd` finds it without PERL5LIB.
install -D -m 0644 "$root/perl/lib/Plack/Handler/Actd.pm" "$stage/usr/share/perl5/Plack/Handler/Actd.pm"
install -D -m 0644 "$root/perl/lib/Actd/Passfd.pm" "$stage/usr/share/perl5/Actd/Passfd.pm"
install -D -m 0644 "$root/perl/lib/Actd/Worker.pm" "$stage/usr/share/perl5/Actd/Worker.pm"
install -D -m 0644 "$root/perl/lib/Actd/Epoll.pm" "$stage/usr/share/perl5/Actd/Epoll.pm"
install -D -m 0644 "$root/perl/lib/Actd/Zygote.pm" "$stage/usr/share/perl5/Actd/Zygote.pm"
gzip -9n <"$root/docs/perl.md" >"$stage/usr/share/doc/actd/perl.md.gz"

# The changelog gets an entry for a version it does not list yet (ACTD_VERSION).
# Its date is the build's timestamp, but always after the entry below it.
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
} | gzip -9n >"$stage/usr/share/doc/actd/$changelog"

install -m 0755 "$pkg/deb/postinst" "$pkg/deb/prerm" "$pkg/deb/postrm" "$stage/DEBIAN/"
install -m 0644 "$pkg/deb/conffiles" "$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$size/" \
	-e "s/@MAINTAINER@/$maintainer/" "$pkg/deb/control.in" >"$stage/DEBIAN/control"
(cd "$stage" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$outdir"
deb=$(cd "$outdir" && pwd)/actd_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "$deb"
