#!/usr/bin/env bash
# Runs independent CCMs, unmodified, against cloudsim and reports what
# cloudsim refused (see hack/peers/main.go and docs/cloudsim.md#peer-ccms-against-cloudsim).
# Not part of `make test`: it builds code from outside this repository.
#
#   hack/peers/run.sh TENCENT_SRC OCI_SRC [flags]   (either may be "-" to skip it)
#
#   TENCENT_SRC: a checkout of weimob-tech/cloud-provider-tencent
#   OCI_SRC:     a checkout of oracle/oci-cloud-controller-manager (vendored: builds offline)
#
# Needs root: it points the clouds' API hostnames at 127.0.0.1 in
# /etc/hosts for the run (restored on exit) and serves TLS on :443.
set -euo pipefail
cd "$(dirname "$0")/../.."
tencent=${1:?usage: $0 TENCENT_SRC|- OCI_SRC|- [flags]}
oci=${2:--}
out=${PEERS_BIN:-$(mktemp -d)}
args=()
if [ "$tencent" != - ]; then
  echo "== building the Tencent peer from $tencent ($(git -C "$tencent" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  (cd "$tencent" && go build -o "$out/tencent-peer-ccm" ./cmd/tencent-cloud-controller-manager)
  args+=(--tencent-peer "$out/tencent-peer-ccm")
fi
if [ "$oci" != - ]; then
  echo "== building the OCI peer from $oci ($(git -C "$oci" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  (cd "$oci" && go build -mod=vendor -o "$out/oci-peer-ccm" ./cmd/oci-cloud-controller-manager)
  args+=(--oci-peer "$out/oci-peer-ccm")
fi

hosts="127.0.0.1 cvm.tencentcloudapi.com clb.tencentcloudapi.com tke.tencentcloudapi.com vpc.tencentcloudapi.com"
hosts+=" iaas.us-ashburn-1.oraclecloud.com identity.us-ashburn-1.oci.oraclecloud.com network-load-balancer-api.us-ashburn-1.oci.oraclecloud.com"
cp /etc/hosts "$out/hosts.orig"
restore() { cat "$out/hosts.orig" > /etc/hosts; }
trap restore EXIT
echo "$hosts # ccmkit hack/peers" >> /etc/hosts

make tools >/dev/null
go run ./hack/peers "${args[@]}" "${@:3}"
