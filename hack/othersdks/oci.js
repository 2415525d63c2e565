// The official OCI Node.js SDK against cloudsim (hack/othersdks/run.sh). It
// signs the host with its port, so the endpoint http://127.0.0.1:PORT works.
const common = require("oci-common");
const core = require("oci-core");
const lb = require("oci-loadbalancer");
const fs = require("fs");

const provider = new common.SimpleAuthenticationDetailsProvider(process.env.OCI_TENANCY, process.env.OCI_USER,
  process.env.OCI_FINGERPRINT, fs.readFileSync(process.env.OCI_KEY_FILE, "utf8"), null, common.Region.US_ASHBURN_1);
const endpoint = "http://" + process.env.CLOUDSIM;
let failed = 0;

async function check(name, f) {
  try {
    console.log(`ok   ${name}: ${JSON.stringify(await f())}`);
  } catch (e) {
    console.log(`FAIL ${name}: ${e.statusCode || ""} ${e.serviceCode || ""} ${e.message}`);
    failed++;
  }
}

(async () => {
  const vn = new core.VirtualNetworkClient({ authenticationDetailsProvider: provider });
  vn.endpoint = endpoint;
  const lbc = new lb.LoadBalancerClient({ authenticationDetailsProvider: provider });
  lbc.endpoint = endpoint;
  await check("ListVcns", async () => (await vn.listVcns({ compartmentId: process.env.OCI_TENANCY })).items.length);
  await check("ListShapes", async () => (await lbc.listShapes({ compartmentId: process.env.OCI_TENANCY })).items.map((s) => s.name));
  process.exit(failed ? 1 : 0);
})();
