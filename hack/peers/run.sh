#!/usr/bin/env bash
# Runs independent CCMs, unmodified, against cloudsim and reports what
# cloudsim refused (see hack/peers/main.go and docs/cloudsim.md#peer-ccms-against-cloudsim).
# Not part of `make test`: it builds code from outside this repository.
#
#   hack/peers/run.sh /path/to/weimob-tech/cloud-provider-tencent
#
# Needs root: it points the Tencent API hostnames at 127.0.0.1 in
# /etc/hosts for the run (restored on exit) and serves TLS on :443.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:?usage: $0 <checkout of weimob-tech/cloud-provider-tencent>}
out=${PEERS_BIN:-$(mktemp -d)}

echo "== building the peer from $src ($(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'))"
(cd "$src" && go build -o "$out/tencent-peer-ccm" ./cmd/tencent-cloud-controller-manager)

hosts="127.0.0.1 cvm.tencentcloudapi.com clb.tencentcloudapi.com tke.tencentcloudapi.com vpc.tencentcloudapi.com # ccmkit hack/peers"
cp /etc/hosts "$out/hosts.orig"
restore() { cat "$out/hosts.orig" > /etc/hosts; }
trap restore EXIT
echo "$hosts" >> /etc/hosts

make tools >/dev/null
go run ./hack/peers --tencent-peer "$out/tencent-peer-ccm" "${@:2}"
