#!/usr/bin/env bash
# Build the control-plane binaries used by the mdiag live tests:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (from the
# Go module k8s.io/kubernetes, wrapped by ./k8s) and etcd, etcdctl (from
# go.etcd.io/etcd, wrapped by ./etcd).
#
# The binaries go to a cache outside the repository, keyed by version:
#   ${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}/k8s-v<k8s>-etcd-v<etcd>/bin
# When they are all there already the script returns at once. Either way the
# last line on stdout is that bin directory; progress goes to stderr.
#
# Environment:
#   MDIAG_HARNESS_CACHE  cache root (default $HOME/.cache/mdiag-harness)
#   GO                   go command (default: go on PATH, else /usr/local/go/bin/go)
#   K8S_GIT_COMMIT       commit id to stamp into the Kubernetes binaries; the
#                        Go module proxy does not tell it, so it is empty
#                        unless given
#   SOURCE_DATE_EPOCH    fixes the stamped build date (default: now)
#   GOMODCACHE, GOCACHE, GOFLAGS, GOPROXY are honoured as usual by go.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf '[harness/build] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The pinned versions are read from the wrapper go.mod files, so those stay
# the single place to change them.
k8s_version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/k8s/go.mod")"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ { print $2; exit }' "$here/etcd/go.mod")"
[[ -n "$k8s_version" ]] || die "cannot read the k8s.io/kubernetes version from $here/k8s/go.mod"
[[ -n "$etcd_version" ]] || die "cannot read the go.etcd.io/etcd/server/v3 version from $here/etcd/go.mod"

cache_root="${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}"
dest="$cache_root/k8s-${k8s_version}-etcd-${etcd_version}"
bin="$dest/bin"
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
etcd_cmds=(etcd etcdctl)

complete() {
    local c
    for c in "${k8s_cmds[@]}" "${etcd_cmds[@]}"; do
        [[ -x "$bin/$c" ]] || return 1
    done
}

if complete; then
    log "binaries for Kubernetes $k8s_version and etcd $etcd_version are cached"
    echo "$bin"
    exit 0
fi

mkdir -p "$dest"
# One build at a time per version: a second caller waits, then finds the
# binaries in place.
exec 9>"$dest/.lock"
if ! flock -n 9; then
    log "another build of $dest is running; waiting for it"
    flock 9
fi
if complete; then
    log "binaries for Kubernetes $k8s_version and etcd $etcd_version are cached"
    echo "$bin"
    exit 0
fi

go_cmd="${GO:-}"
if [[ -z "$go_cmd" ]]; then
    if command -v go >/dev/null 2>&1; then
        go_cmd="$(command -v go)"
    elif [[ -x /usr/local/go/bin/go ]]; then
        go_cmd=/usr/local/go/bin/go
    else
        die "no go command found (set GO=/path/to/go)"
    fi
fi
log "using $("$go_cmd" version)"

# Build into a scratch directory and move the finished binaries in, so an
# interrupted build never leaves a bin/ that looks complete.
staging="$dest/.staging.$$"
rm -rf "$staging"
mkdir -p "$staging"
trap 'rm -rf "$staging"' EXIT

# Stamp the version the way Kubernetes' hack/lib/version.sh does, so
# `--version`, `kubectl version` and the apiserver's /version tell the truth.
if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
    build_date="$(date -u --date="@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
else
    build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
fi
ver="${k8s_version#v}"
major="${ver%%.*}"
minor="${ver#*.}"
minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
k8s_ldflags="-s -w"
k8s_ldflags+=" -X $vpkg.gitVersion=$k8s_version"
k8s_ldflags+=" -X $vpkg.gitMajor=$major"
k8s_ldflags+=" -X $vpkg.gitMinor=$minor"
k8s_ldflags+=" -X $vpkg.gitCommit=${K8S_GIT_COMMIT:-}"
k8s_ldflags+=" -X $vpkg.gitTreeState=clean"
k8s_ldflags+=" -X $vpkg.buildDate=$build_date"

export CGO_ENABLED=0
# nice: the machine's cores are shared with other builds.
gobuild=(nice -n 10 "$go_cmd" build -trimpath -buildvcs=false -mod=readonly)

start=$SECONDS
log "building Kubernetes $k8s_version: ${k8s_cmds[*]}"
(
    cd "$here/k8s"
    pkgs=()
    for c in "${k8s_cmds[@]}"; do pkgs+=("./cmd/$c"); done
    "${gobuild[@]}" -ldflags "$k8s_ldflags" -o "$staging/" "${pkgs[@]}"
)
log "Kubernetes built in $((SECONDS - start)) s"

t=$SECONDS
log "building etcd $etcd_version: ${etcd_cmds[*]}"
(
    cd "$here/etcd"
    pkgs=()
    for c in "${etcd_cmds[@]}"; do pkgs+=("./cmd/$c"); done
    "${gobuild[@]}" -ldflags "-s -w" -o "$staging/" "${pkgs[@]}"
)
log "etcd built in $((SECONDS - t)) s"

# Check that what was built says what it is before it goes in the cache.
got="$("$staging/kube-apiserver" --version 2>&1 || true)"
[[ "$got" == "Kubernetes $k8s_version" ]] || die "kube-apiserver --version says '$got', expected 'Kubernetes $k8s_version'"
got="$("$staging/etcd" --version 2>&1 | head -n1 || true)"
[[ "$got" == "etcd Version: ${etcd_version#v}" ]] || die "etcd --version says '$got', expected 'etcd Version: ${etcd_version#v}'"

mkdir -p "$bin"
for c in "${k8s_cmds[@]}" "${etcd_cmds[@]}"; do
    mv -f "$staging/$c" "$bin/$c"
done
log "built in $((SECONDS - start)) s total; $(du -sh "$bin" | cut -f1) of binaries in $bin"
echo "$bin"
