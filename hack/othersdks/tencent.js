// The official Tencent Cloud Node.js SDK against cloudsim (hack/othersdks/run.sh).
// It signs `host:<hostname>` without the port and takes the service from the
// endpoint's first label, so it keeps the real endpoints and uses cloudsim as
// its proxy: cloudsim answers the CONNECT tunnel itself (pkg/cloudsim/tunnel).
const tc = require("tencentcloud-sdk-nodejs");
const sim = process.env.CLOUDSIM; // 127.0.0.1:PORT
const credential = { secretId: process.env.SECRET_ID, secretKey: process.env.SECRET_KEY };
let failed = 0;

function client(Client, httpProfile) {
  return new Client({ credential, region: "ap-guangzhou", profile: { httpProfile } });
}

async function check(name, want, f) {
  try {
    const got = await f();
    const ok = want === "ok";
    console.log(`${ok ? "ok  " : "FAIL"} ${name}: ${JSON.stringify(got)}`);
    if (!ok) failed++;
  } catch (e) {
    const ok = want !== "ok" && e.code === want;
    console.log(`${ok ? "ok  " : "FAIL"} ${name}: ${e.code || ""} ${e.message}`);
    if (!ok) failed++;
  }
}

(async () => {
  // The endpoint form docs/cloudsim.md gives the Go SDK cannot work here.
  await check("endpoint 127.0.0.1:PORT is refused (signature over the host without port)", "AuthFailure.SignatureFailure",
    () => client(tc.cvm.v20170312.Client, { protocol: "http://", endpoint: sim }).DescribeInstances({ Limit: 1 }));
  for (const protocol of ["https://", "http://"]) {
    const hp = { protocol, proxy: "http://" + sim };
    await check(`${protocol} cvm DescribeInstances`, "ok",
      async () => (await client(tc.cvm.v20170312.Client, hp).DescribeInstances({ Limit: 1 })).TotalCount);
    // A field of the current API that clb v1.3.105's Go model lacks (docs/cloudsim.md, "Fields accepted by name").
    await check(`${protocol} clb CreateLoadBalancer with AvailableZoneAffinityInfo`, "ok", async () => {
      const clb = client(tc.clb.v20180317.Client, hp);
      const created = await clb.CreateLoadBalancer({ LoadBalancerType: "OPEN", LoadBalancerName: "node-sdk",
        AvailableZoneAffinityInfo: { Enable: true, ExitRatio: 50, ReentryRatio: 80 } });
      const lbs = await clb.DescribeLoadBalancers({ LoadBalancerIds: created.LoadBalancerIds });
      return lbs.LoadBalancerSet.map((lb) => lb.LoadBalancerId);
    });
  }
  process.exit(failed ? 1 : 0);
})();
