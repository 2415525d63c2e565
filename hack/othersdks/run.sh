#!/usr/bin/env bash
# Runs the official Node.js SDKs of both clouds against cloudsim, as a user of
# another language would (docs/cloudsim.md, "Using cloudsim from other
# languages"). Not part of `make test`: it installs npm packages, into a
# scratch directory outside the repository.
#
#   hack/othersdks/run.sh            # SCRATCH=/path reuses an install
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
scratch=${SCRATCH:-$(mktemp -d)}
# Versions tried here; newer ones should work the same way.
tencent_sdk=tencentcloud-sdk-nodejs@4.1.313
oci_sdk="oci-common@2.139.1 oci-core@2.139.1 oci-loadbalancer@2.139.1"
if [ ! -d "$scratch/node_modules/tencentcloud-sdk-nodejs" ]; then
  echo "== npm install into $scratch"
  (cd "$scratch" && npm init -y >/dev/null && npm install --no-audit --no-fund $tencent_sdk $oci_sdk >/dev/null)
fi
go build -o "$scratch/cloudsim" ./cmd/cloudsim

# An OCI API key for the run.
openssl genrsa -out "$scratch/oci.pem" 2048 2>/dev/null
openssl rsa -in "$scratch/oci.pem" -pubout -out "$scratch/oci_pub.pem" 2>/dev/null
fp=$(openssl rsa -pubout -outform DER -in "$scratch/oci.pem" 2>/dev/null | openssl md5 -c | awk '{print $2}')
export OCI_TENANCY=ocid1.tenancy.oc1..aaaaaaaaothersdks OCI_USER=ocid1.user.oc1..aaaaaaaaothersdks OCI_FINGERPRINT=$fp OCI_KEY_FILE=$scratch/oci.pem
export SECRET_ID=AKIDothersdks SECRET_KEY=othersdks-secret

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export CLOUDSIM=127.0.0.1:$port
"$scratch/cloudsim" --listen "$CLOUDSIM" --credentials "$SECRET_ID:$SECRET_KEY" --no-dataplane \
  --oci-key "$OCI_TENANCY/$OCI_USER/$fp=$scratch/oci_pub.pem" --tunnel-ca "$scratch/tunnel-ca.pem" \
  >"$scratch/cloudsim.out" 2>"$scratch/cloudsim.log" &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://$CLOUDSIM/admin/healthz" >/dev/null && break; sleep 0.1; done

export NODE_PATH=$scratch/node_modules NODE_EXTRA_CA_CERTS=$scratch/tunnel-ca.pem
status=0
echo "== Tencent Cloud ($tencent_sdk)"; node "$repo/hack/othersdks/tencent.js" || status=1
echo "== OCI ($oci_sdk)"; node "$repo/hack/othersdks/oci.js" || status=1
exit $status
