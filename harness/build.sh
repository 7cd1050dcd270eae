#!/usr/bin/env bash
# Build the binaries used by the mdiag live tests: kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl (from the Go module
# k8s.io/kubernetes, wrapped by ./k8s), etcd, etcdctl (from go.etcd.io/etcd,
# wrapped by ./etcd), helm (Helm v3's CLI from helm.sh/helm/v3, wrapped by
# ./helm), kubelet (from k8s.io/kubernetes too, for the harness's real node)
# and, on request only, Helm v4's CLI (from helm.sh/helm/v4, wrapped by
# ./helm4; the real-node gate benchmark compares its --wait=watcher).
#
# The binaries go to a cache outside the repository, keyed by version:
#   ${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}/k8s-v<k8s>-etcd-v<etcd>/bin
#   ${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}/helm-v<helm>/bin
#   ${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}/kubelet-v<k8s>/bin
#   ${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}/helm-v<helm4>/bin
# Each set is built only when it is missing, so with everything there the
# script returns at once. Progress goes to stderr.
#
# Usage:
#   build.sh          all of them; the last stdout line is the k8s/etcd bin dir
#   build.sh helm     helm only; the last stdout line is the helm bin dir
#   build.sh kubelet  kubelet only; the last stdout line is the kubelet bin dir
#   build.sh helm4    Helm v4 only (not part of 'all': only the benchmark needs
#                     it); the last stdout line is its bin dir
#
# Environment:
#   MDIAG_HARNESS_CACHE  cache root (default $HOME/.cache/mdiag-harness)
#   GO                   go command (default: go on PATH, else /usr/local/go/bin/go)
#   K8S_GIT_COMMIT       commit id to stamp into the Kubernetes binaries; the
#                        Go module proxy does not tell it, so it is empty
#                        unless given
#   HELM_GIT_COMMIT      the same for helm
#   HELM4_GIT_COMMIT     the same for Helm v4
#   SOURCE_DATE_EPOCH    fixes the stamped build date (default: now)
#   GOMODCACHE, GOCACHE, GOFLAGS, GOPROXY are honoured as usual by go.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf '[harness/build] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

what="${1:-all}"
case "$what" in
    all | helm | kubelet | helm4) ;;
    *) die "unknown argument '$what' (expected nothing, 'all', 'helm', 'kubelet' or 'helm4')" ;;
esac

# The pinned versions are read from the wrapper go.mod files, so those stay
# the single place to change them.
k8s_version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/k8s/go.mod")"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ { print $2; exit }' "$here/etcd/go.mod")"
helm_version="$(awk '$1 == "helm.sh/helm/v3" && $2 ~ /^v/ { print $2; exit }' "$here/helm/go.mod")"
# Helm stamps its default Kubernetes version (used when no cluster is asked,
# as by `helm template`) from the client-go it is built with.
helm_client_go="$(awk '$1 == "k8s.io/client-go" && $2 ~ /^v/ { print $2; exit }' "$here/helm/go.mod")"
helm4_version="$(awk '$1 == "helm.sh/helm/v4" && $2 ~ /^v/ { print $2; exit }' "$here/helm4/go.mod")"
[[ -n "$k8s_version" ]] || die "cannot read the k8s.io/kubernetes version from $here/k8s/go.mod"
[[ -n "$etcd_version" ]] || die "cannot read the go.etcd.io/etcd/server/v3 version from $here/etcd/go.mod"
[[ -n "$helm_version" ]] || die "cannot read the helm.sh/helm/v3 version from $here/helm/go.mod"
[[ -n "$helm_client_go" ]] || die "cannot read the k8s.io/client-go version from $here/helm/go.mod"
[[ -n "$helm4_version" ]] || die "cannot read the helm.sh/helm/v4 version from $here/helm4/go.mod"

cache_root="${MDIAG_HARNESS_CACHE:-$HOME/.cache/mdiag-harness}"
k8s_dest="$cache_root/k8s-${k8s_version}-etcd-${etcd_version}"
k8s_bin="$k8s_dest/bin"
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
etcd_cmds=(etcd etcdctl)
helm_dest="$cache_root/helm-${helm_version}"
helm_bin="$helm_dest/bin"
# Helm v4's version starts with v4, so its dir never meets v3's.
helm4_dest="$cache_root/helm-${helm4_version}"
helm4_bin="$helm4_dest/bin"
# The kubelet has a cache set of its own, so adding it kept the cached
# control plane valid.
kubelet_dest="$cache_root/kubelet-${k8s_version}"
kubelet_bin="$kubelet_dest/bin"

# complete DIR CMD...: whether every CMD is an executable in DIR.
complete() {
    local dir="$1" c
    shift
    for c in "$@"; do
        [[ -x "$dir/$c" ]] || return 1
    done
}

go_cmd=""
find_go() {
    [[ -z "$go_cmd" ]] || return 0
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
}

if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
    build_date="$(date -u --date="@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
else
    build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
fi

export CGO_ENABLED=0

# Builds go into a scratch directory and the finished binaries are moved in,
# so an interrupted build never leaves a bin/ that looks complete.
stagings=()
cleanup() {
    local d
    for d in "${stagings[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

# lock DEST FD: one build at a time per cache dir; a second caller waits,
# then finds the binaries in place.
lock() {
    local dest="$1" fd="$2"
    mkdir -p "$dest"
    eval "exec $fd>\"\$dest/.lock\""
    if ! flock -n "$fd"; then
        log "another build of $dest is running; waiting for it"
        flock "$fd"
    fi
}

# Stamp the version the way Kubernetes' hack/lib/version.sh does, so
# `--version`, `kubectl version` and the apiserver's /version tell the truth.
k8s_ldflags() {
    local ver="${k8s_version#v}" major minor
    major="${ver%%.*}"
    minor="${ver#*.}"
    minor="${minor%%.*}"
    local vpkg=k8s.io/component-base/version
    local ldflags="-s -w"
    ldflags+=" -X $vpkg.gitVersion=$k8s_version"
    ldflags+=" -X $vpkg.gitMajor=$major"
    ldflags+=" -X $vpkg.gitMinor=$minor"
    ldflags+=" -X $vpkg.gitCommit=${K8S_GIT_COMMIT:-}"
    ldflags+=" -X $vpkg.gitTreeState=clean"
    ldflags+=" -X $vpkg.buildDate=$build_date"
    printf '%s' "$ldflags"
}

gobuild() {
    # nice: the machine's cores are shared with other builds.
    nice -n 10 "$go_cmd" build -trimpath -buildvcs=false -mod=readonly "$@"
}

build_k8s() {
    if complete "$k8s_bin" "${k8s_cmds[@]}" "${etcd_cmds[@]}"; then
        log "binaries for Kubernetes $k8s_version and etcd $etcd_version are cached"
        return 0
    fi
    lock "$k8s_dest" 8
    if complete "$k8s_bin" "${k8s_cmds[@]}" "${etcd_cmds[@]}"; then
        log "binaries for Kubernetes $k8s_version and etcd $etcd_version are cached"
        return 0
    fi
    find_go
    local staging="$k8s_dest/.staging.$$"
    rm -rf "$staging"
    mkdir -p "$staging"
    stagings+=("$staging")

    local ldflags
    ldflags="$(k8s_ldflags)"

    local start=$SECONDS t c pkgs
    log "building Kubernetes $k8s_version: ${k8s_cmds[*]}"
    (
        cd "$here/k8s"
        pkgs=()
        for c in "${k8s_cmds[@]}"; do pkgs+=("./cmd/$c"); done
        gobuild -ldflags "$ldflags" -o "$staging/" "${pkgs[@]}"
    )
    log "Kubernetes built in $((SECONDS - start)) s"

    t=$SECONDS
    log "building etcd $etcd_version: ${etcd_cmds[*]}"
    (
        cd "$here/etcd"
        pkgs=()
        for c in "${etcd_cmds[@]}"; do pkgs+=("./cmd/$c"); done
        gobuild -ldflags "-s -w" -o "$staging/" "${pkgs[@]}"
    )
    log "etcd built in $((SECONDS - t)) s"

    # Check that what was built says what it is before it goes in the cache.
    local got
    got="$("$staging/kube-apiserver" --version 2>&1 || true)"
    [[ "$got" == "Kubernetes $k8s_version" ]] || die "kube-apiserver --version says '$got', expected 'Kubernetes $k8s_version'"
    got="$("$staging/etcd" --version 2>&1 | head -n1 || true)"
    [[ "$got" == "etcd Version: ${etcd_version#v}" ]] || die "etcd --version says '$got', expected 'etcd Version: ${etcd_version#v}'"

    mkdir -p "$k8s_bin"
    for c in "${k8s_cmds[@]}" "${etcd_cmds[@]}"; do
        mv -f "$staging/$c" "$k8s_bin/$c"
    done
    log "built in $((SECONDS - start)) s total; $(du -sh "$k8s_bin" | cut -f1) of binaries in $k8s_bin"
}

build_helm() {
    if complete "$helm_bin" helm; then
        log "helm $helm_version is cached"
        return 0
    fi
    lock "$helm_dest" 7
    if complete "$helm_bin" helm; then
        log "helm $helm_version is cached"
        return 0
    fi
    find_go
    local staging="$helm_dest/.staging.$$"
    rm -rf "$staging"
    mkdir -p "$staging"
    stagings+=("$staging")

    # Stamp what Helm's Makefile stamps for a tagged release: the version
    # (the source only says v3.<minor>), no "unreleased" metadata, and the
    # Kubernetes version of its client-go (v0.<minor>.x means 1.<minor>).
    local kminor="${helm_client_go#v0.}"
    kminor="${kminor%%.*}"
    local vpkg=helm.sh/helm/v3/internal/version
    local ldflags="-s -w"
    ldflags+=" -X $vpkg.version=$helm_version"
    ldflags+=" -X $vpkg.metadata="
    ldflags+=" -X $vpkg.gitCommit=${HELM_GIT_COMMIT:-}"
    ldflags+=" -X $vpkg.gitTreeState=clean"
    local p
    for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$kminor"
    done

    local start=$SECONDS
    log "building helm $helm_version"
    (
        cd "$here/helm"
        # Helm's own main package, named by the tool directive of helm/go.mod.
        gobuild -ldflags "$ldflags" -o "$staging/helm" helm.sh/helm/v3/cmd/helm
    )
    local got
    got="$(HELM_CONFIG_HOME="$staging/.h" HELM_CACHE_HOME="$staging/.h" HELM_DATA_HOME="$staging/.h" \
        "$staging/helm" version --template '{{.Version}}' 2>&1 || true)"
    [[ "$got" == "$helm_version" ]] || die "helm version says '$got', expected '$helm_version'"
    mkdir -p "$helm_bin"
    mv -f "$staging/helm" "$helm_bin/helm"
    log "helm built in $((SECONDS - start)) s; $(du -sh "$helm_bin" | cut -f1) in $helm_bin"
}

build_helm4() {
    if complete "$helm4_bin" helm; then
        log "helm $helm4_version is cached"
        return 0
    fi
    lock "$helm4_dest" 5
    if complete "$helm4_bin" helm; then
        log "helm $helm4_version is cached"
        return 0
    fi
    find_go
    local staging="$helm4_dest/.staging.$$"
    rm -rf "$staging"
    mkdir -p "$staging"
    stagings+=("$staging")

    # What Helm v4's Makefile stamps for a tagged release: the version (the
    # source only says v4.<minor>), no "unreleased" metadata. Unlike v3 it
    # takes its default Kubernetes version from client-go's module version
    # in the build info, so there is nothing more to stamp.
    local vpkg=helm.sh/helm/v4/internal/version
    local ldflags="-s -w"
    ldflags+=" -X $vpkg.version=$helm4_version"
    ldflags+=" -X $vpkg.metadata="
    ldflags+=" -X $vpkg.gitCommit=${HELM4_GIT_COMMIT:-}"
    ldflags+=" -X $vpkg.gitTreeState=clean"

    local start=$SECONDS
    log "building helm $helm4_version"
    (
        cd "$here/helm4"
        # Helm's own main package, named by the tool directive of helm4/go.mod.
        gobuild -ldflags "$ldflags" -o "$staging/helm" helm.sh/helm/v4/cmd/helm
    )
    local got
    got="$(HELM_CONFIG_HOME="$staging/.h" HELM_CACHE_HOME="$staging/.h" HELM_DATA_HOME="$staging/.h" \
        "$staging/helm" version --template '{{.Version}}' 2>&1 || true)"
    [[ "$got" == "$helm4_version" ]] || die "helm version says '$got', expected '$helm4_version'"
    mkdir -p "$helm4_bin"
    mv -f "$staging/helm" "$helm4_bin/helm"
    log "helm built in $((SECONDS - start)) s; $(du -sh "$helm4_bin" | cut -f1) in $helm4_bin"
}

build_kubelet() {
    if complete "$kubelet_bin" kubelet; then
        log "kubelet $k8s_version is cached"
        return 0
    fi
    lock "$kubelet_dest" 6
    if complete "$kubelet_bin" kubelet; then
        log "kubelet $k8s_version is cached"
        return 0
    fi
    find_go
    local staging="$kubelet_dest/.staging.$$"
    rm -rf "$staging"
    mkdir -p "$staging"
    stagings+=("$staging")
    local ldflags
    ldflags="$(k8s_ldflags)"
    local start=$SECONDS
    log "building kubelet $k8s_version"
    (
        cd "$here/k8s"
        gobuild -ldflags "$ldflags" -o "$staging/kubelet" ./cmd/kubelet
    )
    local got
    got="$("$staging/kubelet" --version 2>&1 || true)"
    [[ "$got" == "Kubernetes $k8s_version" ]] || die "kubelet --version says '$got', expected 'Kubernetes $k8s_version'"
    mkdir -p "$kubelet_bin"
    mv -f "$staging/kubelet" "$kubelet_bin/kubelet"
    log "kubelet built in $((SECONDS - start)) s; $(du -sh "$kubelet_bin" | cut -f1) in $kubelet_bin"
}

case "$what" in
    all)
        build_k8s
        build_helm
        build_kubelet
        echo "$k8s_bin"
        ;;
    kubelet)
        build_kubelet
        echo "$kubelet_bin"
        ;;
    helm)
        build_helm
        echo "$helm_bin"
        ;;
    helm4)
        build_helm4
        echo "$helm4_bin"
        ;;
esac
