#!/usr/bin/env bash
# Ensure SWI-Prolog >= 9.1.12 is available for janus-swi.
#
# 1. If the project prefix already holds a good swipl, do nothing (fast path).
# 2. Else, if a swipl >= 9.1.12 is on PATH, record its bin directory and stop.
# 3. Else build SWI-Prolog 9.2.9 from Debian trixie's source tarball (sha256 checked)
#    into the project prefix (default: <repo>/.swipl, gitignored).
#
# On success the bin directory that must come first on PATH is written to
# $PREFIX/BINDIR and printed on stdout (last line).
set -euo pipefail

MIN_VERSION="9.1.12"
SWIPL_VERSION="9.2.9"
TARBALL="swi-prolog_${SWIPL_VERSION}+dfsg.orig.tar.gz"
SHA256="6d6f2dd6e4558bccb7c87cc7a5cbcf582503384a5fa890efba0ae91a0aaf2258"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${TK_SWIPL_PREFIX:-$ROOT/.swipl}"
WORK="$PREFIX/build"

log() { echo "install-swipl: $*" >&2; }
die() { echo "install-swipl: ERROR: $*" >&2; exit 1; }

version_ok() {  # $1 = path to swipl; succeeds when its version >= MIN_VERSION
    local v
    v="$("$1" --dump-runtime-variables 2>/dev/null | sed -n 's/^PLVERSION="\([0-9]*\)";$/\1/p')" || return 1
    [ -n "$v" ] || return 1
    # PLVERSION is major*10000 + minor*100 + patch
    [ "$v" -ge 90112 ]
}

finish() {  # $1 = bin dir
    mkdir -p "$PREFIX"
    printf '%s\n' "$1" > "$PREFIX/BINDIR"
    echo "$1"
    exit 0
}

# 1. our own prefix
if [ -x "$PREFIX/bin/swipl" ] && version_ok "$PREFIX/bin/swipl"; then
    finish "$PREFIX/bin"
fi

# 2. an existing swipl on PATH (not ours)
if [ -z "${TK_SWIPL_FORCE_BUILD:-}" ] && command -v swipl >/dev/null 2>&1; then
    sys="$(command -v swipl)"
    if version_ok "$sys"; then
        log "using existing $sys"
        finish "$(dirname "$sys")"
    fi
    log "found $sys but it is older than $MIN_VERSION; building $SWIPL_VERSION into $PREFIX"
fi

# 3. build from source
for tool in apt-get cmake sha256sum tar cc; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required to build SWI-Prolog but is not installed"
done
if command -v ninja >/dev/null 2>&1; then GEN="-GNinja"; BUILD=(ninja); else GEN=""; BUILD=(make -j"$(nproc)"); fi

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || die "$KEYRING not found (install the debian-archive-keyring package)"

mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial" "$WORK/apt/sources" "$WORK/src"
cat > "$WORK/apt/sources/trixie-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: $KEYRING
EOF
APT_OPTS=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$WORK/apt/sources"
          -o "Dir::State::Lists=$WORK/apt/lists" -o "Dir::Cache=$WORK/apt/cache"
          -o Debug::NoLocking=1)

cd "$WORK/src"
if [ ! -f "$TARBALL" ]; then
    log "fetching the source index of Debian trixie (private apt dirs, no system change)"
    apt-get "${APT_OPTS[@]}" -qq update >"$WORK/apt-update.log" 2>&1 \
        || die "apt-get update failed (no network to the Debian mirror?); see $WORK/apt-update.log"
    log "downloading $TARBALL"
    # apt-get prints 404 for the .dsc/.debian.tar.xz and exits non-zero; only the tarball matters.
    apt-get "${APT_OPTS[@]}" source --download-only "swi-prolog=${SWIPL_VERSION}+dfsg-*" >"$WORK/apt-source.log" 2>&1 \
        || apt-get "${APT_OPTS[@]}" source --download-only swi-prolog >>"$WORK/apt-source.log" 2>&1 || true
    [ -f "$TARBALL" ] || die "download of $TARBALL failed (no network, or trixie no longer has $SWIPL_VERSION); see $WORK/apt-source.log"
fi
echo "$SHA256  $TARBALL" | sha256sum -c --status - \
    || { rm -f "$TARBALL"; die "checksum mismatch for $TARBALL (expected $SHA256); the file was removed, run again"; }

log "unpacking"
rm -rf "swipl-src" && mkdir swipl-src
tar -xzf "$TARBALL" -C swipl-src --strip-components=1 || die "could not unpack $TARBALL"

log "configuring (cmake)"
mkdir -p swipl-src/build && cd swipl-src/build
cmake $GEN -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DSWIPL_PACKAGE_LIST="clib;plunit;swipy" -DINSTALL_DOCUMENTATION=OFF -DBUILD_TESTING=OFF \
    -DUSE_TCMALLOC=OFF -DSWIPL_PACKAGES_X=OFF -DSWIPL_PACKAGES_JAVA=OFF .. >"$WORK/cmake.log" 2>&1 \
    || die "cmake configuration failed; see $WORK/cmake.log"
log "building (about a minute on 2 cores)"
"${BUILD[@]}" >"$WORK/build.log" 2>&1 || die "build failed; see $WORK/build.log"
"${BUILD[@]}" install >"$WORK/install.log" 2>&1 || die "install failed; see $WORK/install.log"
version_ok "$PREFIX/bin/swipl" || die "built swipl at $PREFIX/bin/swipl does not report version >= $MIN_VERSION"
cd "$WORK" && rm -rf "$WORK/src/swipl-src"
log "installed SWI-Prolog $SWIPL_VERSION into $PREFIX"
finish "$PREFIX/bin"
