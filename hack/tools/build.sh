#!/usr/bin/env bash
# Builds the local test control plane (kube-apiserver and etcd) from source into a
# cache directory outside the repository, once. CI clones afresh on the same
# machine, so a cache under the home directory survives between runs while one
# inside the clone would not.
#
# Prints the cache directory on stdout; progress goes to stderr.
set -euo pipefail

K8S_VERSION=v1.37.1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${CCM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccmkit/k8s-${K8S_VERSION}}
mkdir -p "$dir"

pkg=k8s.io/component-base/version
ldflags="-s -w \
 -X $pkg.gitVersion=${K8S_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=37 \
 -X $pkg.gitTreeState=clean -X $pkg.buildDate=2026-01-01T00:00:00Z \
 -X k8s.io/client-go/pkg/version.gitVersion=${K8S_VERSION}"

build() { # name, package
  local name=$1 pkgpath=$2
  if [ -x "$dir/$name" ]; then
    echo "tools: $name is cached in $dir" >&2
    return
  fi
  echo "tools: building $name (a cold kube-apiserver build takes about 6 minutes on 2 cores)..." >&2
  local start=$SECONDS
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$dir/$name.tmp" "$pkgpath")
  mv "$dir/$name.tmp" "$dir/$name"
  echo "tools: built $name in $((SECONDS - start))s" >&2
}

build etcd ./etcd
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
echo "$dir"
