// cloudsim console: polls /admin/console/state and redraws. Plain DOM,
// no framework, no innerHTML: names and tags come from API callers.
"use strict";

const POLL_MS = 1000;

// el builds an element: el("td", {class: "num"}, "3", child...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("data-")) e.setAttribute(k, String(v));
    else if (k === "class") e.className = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// table draws rows (arrays of cells: a string, a number or an element)
// under a header; rowAttrs gives each row's attributes.
function table(head, rows, rowAttrs) {
  if (rows.length === 0) return el("p", {class: "empty"}, "none");
  return el("table", {},
    el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r, i) => el("tr", rowAttrs ? rowAttrs(i) : {},
      r.map((c) => (c instanceof Node && c.tagName === "TD") ? c : el("td", typeof c === "number" ? {class: "num"} : {}, c))))));
}

const tag = (cls, text) => el("span", {class: cls}, text);
const list = (xs) => (xs && xs.length ? xs.join(", ") : "");

function fill(id, ...content) {
  const body = document.querySelector(`#${id} .body`);
  body.replaceChildren(...content.flat(Infinity));
}

// ---- sections ----

function faults(st) {
  const rows = (st.faults || []).map((f) => [f.action, f.errorRate, f.errorCode || "", f.httpStatus || "",
    f.latency ? `${f.latency / 1e6} ms` : "", f.failTask ? "yes" : "", f.times || "until cleared"]);
  const lag = st.readLag && st.readLag.max !== "0s"
    ? el("p", {}, `Lagging reads: List/Describe answers trail writes by up to ${st.readLag.max} (${st.readLag.pending} resources not yet visible).`)
    : el("p", {class: "meta"}, "Reads see every write at once (no read lag).");
  fill("faults", table(["action", "error rate", "error code", "HTTP status", "latency", "fails the task", "times"], rows), lag);
}

function instances(st) {
  const rows = (st.instances || []).map((i) => [i.id, i.ocid || "", i.name, tag(i.state, i.state),
    i.zone, i.availabilityDomain || "", i.privateIP, i.publicIP || "", i.vpcID, list(i.securityGroupIds), list(i.nsgIds)]);
  fill("instances", table(["id", "OCID", "name", "state", "zone", "availability domain", "private IP", "public IP", "VPC",
    "security groups", "NSGs"], rows, (n) => ({"data-instance": st.instances[n].id})));
}

// targetRow draws one target as the control plane has it, with its
// data-plane view (health, traffic) found by address.
function targetRow(lbID, listener, addr, name, weight, drain, dp) {
  const d = dp || {};
  const health = d.health || "not in the data plane";
  const state = drain ? tag("draining", "draining") : weight === 0 ? tag("draining", "weight 0: no new traffic") : tag("ok", "active");
  return {
    attrs: {"data-lb": lbID, "data-listener": listener, "data-target": addr},
    cells: [name, addr, weight, tag(health, health), state, d.inService ? "yes" : "no", d.active ?? "", d.forwarded ?? "", d.lastError || ""],
  };
}

const TARGET_HEAD = ["target", "address", "weight", "health", "drain state", "in service", "open conns", "forwarded", "last error"];

function targetTable(rows) {
  return table(TARGET_HEAD, rows.map((r) => r.cells), (i) => rows[i].attrs);
}

function dpListener(dp, id) {
  return ((dp && dp.listeners) || []).find((l) => l.id === id);
}

function trafficLine(dl) {
  if (!dl) return el("p", {class: "meta"}, "data plane: not serving");
  return el("p", {class: "meta"}, `data plane ${dl.address}: ${dl.listening ? "listening" : "not listening" + (dl.error ? " (" + dl.error + ")" : "")}, `
    + `health check ${dl.healthCheck}, ${dl.healthyTargets} in service, ${dl.connections} connections, ${dl.refused} refused, ${dl.denied} denied`
    + (dl.lastDenied ? ` (last: ${dl.lastDenied})` : ""));
}

function tencentCLBs(st) {
  const t = st.tencent || {};
  const lbs = t.loadBalancers || [];
  fill("tencent-clbs", lbs.length === 0 ? el("p", {class: "empty"}, "none") : lbs.map((lb) => {
    const dp = (t.dataPlane || {})[lb.id];
    return el("div", {class: "lb", "data-lb": lb.id},
      el("h3", {}, `${lb.id} `, el("span", {class: "meta"}, `${lb.name} · ${lb.type} · VIP ${lb.vip || "-"} · `),
        tag(lb.status === 1 ? "ok" : "unknown", lb.status === 1 ? "normal" : "creating"),
        lb.inOperation ? tag("unknown", ` · task: ${lb.inOperation}`) : "",
        el("span", {class: "meta"}, lb.securityGroups && lb.securityGroups.length ? ` · security groups ${list(lb.securityGroups)}` : "")),
      (lb.listeners || []).map((li) => {
        const dl = dpListener(dp, li.id);
        const byAddr = new Map(((dl && dl.targets) || []).map((x) => [x.address, x]));
        const rows = [];
        const add = (tg, where) => {
          const addr = `${tg.ip}:${tg.port}`;
          rows.push(targetRow(lb.id, li.id, addr, (tg.instanceID || tg.eniIP) + where, tg.weight ?? 10, false, byAddr.get(addr)));
        };
        (li.targets || []).forEach((tg) => add(tg, ""));
        (li.rules || []).forEach((r) => (r.targets || []).forEach((tg) => add(tg, ` (${r.domain}${r.url})`)));
        return el("div", {"data-listener": li.id},
          el("h3", {}, `listener ${li.id} ${li.name ? "(" + li.name + ") " : ""}${li.protocol}:${li.port}`,
            el("span", {class: "meta"}, ` · scheduler ${li.scheduler}`)),
          trafficLine(dl), targetTable(rows));
      }));
  }));
}

function ociLBs(st) {
  const o = st.oci || {};
  const lbs = o.loadBalancers || [];
  fill("oci-lbs", lbs.length === 0 ? el("p", {class: "empty"}, "none") : lbs.map((lb) => {
    const dp = (o.dataPlane || {})[lb.id];
    const sets = new Map((lb.backendSets || []).map((b) => [b.name, b]));
    return el("div", {class: "lb", "data-lb": lb.id},
      el("h3", {}, `${lb.displayName} `, el("span", {class: "meta"}, `${lb.kind} · ${lb.id} · VIP ${lb.ipAddress || "-"} · ${lb.shape || ""} `),
        tag(lb.lifecycleState, lb.lifecycleState), lb.busy ? tag("unknown", ` · work request: ${lb.busy}`) : "",
        el("span", {class: "meta"}, lb.networkSecurityGroupIds && lb.networkSecurityGroupIds.length ? ` · NSGs ${list(lb.networkSecurityGroupIds)}` : "")),
      (lb.listeners || []).map((li) => {
        const dl = dpListener(dp, li.name);
        const byName = new Map(((dl && dl.targets) || []).map((x) => [x.id, x]));
        const bs = sets.get(li.defaultBackendSetName) || {backends: []};
        const rows = bs.backends.map((be) => {
          const addr = `${be.ipAddress || be.targetId}:${be.port}`;
          return targetRow(lb.id, li.name, addr, be.name + (be.backup ? " (backup)" : "") + (be.offline ? " (offline)" : ""),
            be.weight, be.drain, byName.get(be.name));
        });
        return el("div", {"data-listener": li.name},
          el("h3", {}, `listener ${li.name} ${li.protocol}:${li.port}`,
            el("span", {class: "meta"}, ` → backend set ${li.defaultBackendSetName} · policy ${bs.policy || ""}`
              + (bs.healthChecker ? ` · health check ${bs.healthChecker.protocol}` : ""))),
          trafficLine(dl), targetTable(rows));
      }));
  }));
}

function routes(st) {
  const tables = (st.tencent && st.tencent.routeTables) || [];
  const gateway = (rt, ip) => (st.instances || []).find((i) => i.privateIP === ip && i.vpcID === rt.vpcID);
  const drawn = tables.map((rt) => el("div", {"data-route-table": rt.name},
    el("h3", {}, `TKE cluster route table ${rt.name} `, el("span", {class: "meta"}, `${rt.cidr} · ${rt.vpcID}${rt.region ? " · " + rt.region : ""}`)),
    table(["destination", "gateway (node IP)", "gateway instance"], (rt.routes || []).map((r) => {
      const gw = gateway(rt, r.gatewayIp);
      return [r.destinationCidrBlock, r.gatewayIp, gw ? `${gw.id} (${gw.name})` : tag("err", "no instance")];
    }))));
  const vpcTables = (st.tencent && st.tencent.vpcRouteTables) || [];
  const vpcDrawn = vpcTables.map((rt) => el("div", {"data-route-table": rt.id},
    el("h3", {}, `VPC route table ${rt.id} `, el("span", {class: "meta"}, `${rt.name} · ${rt.vpcID}${rt.region ? " · " + rt.region : ""}`)),
    table(["route id", "destination", "gateway type", "gateway", "gateway instance", "description"], (rt.routes || []).map((r) => {
      const gw = r.gatewayType === "NORMAL_CVM" ? gateway(rt, r.gatewayId) : null;
      return [r.id ?? "", r.destinationCidrBlock, r.gatewayType, r.gatewayId || "", gw ? `${gw.id} (${gw.name})` : "", r.description || ""];
    }))));
  fill("routes", tables.length + vpcTables.length === 0 ? el("p", {class: "empty"}, "no route tables") : [drawn, vpcDrawn],
    el("p", {class: "meta"}, "OCI: the CCM manages no routes there; cloudsim keeps none."));
}

// ports formats an OCI rule's tcpOptions/udpOptions.
function ociPorts(r) {
  const o = r.tcpOptions || r.udpOptions;
  const pr = o && (o.destinationPortRange || o.sourcePortRange);
  return pr ? (pr.min === pr.max ? `${pr.min}` : `${pr.min}-${pr.max}`) : "all";
}
const OCI_PROTO = {"all": "all", "6": "TCP", "17": "UDP", "1": "ICMP", "58": "ICMPv6"};

function firewalls(st) {
  const sgs = (st.tencent && st.tencent.securityGroups) || [];
  const net = (st.oci && st.oci.network) || {};
  const sgRow = (dir) => (p) => [dir, p.PolicyIndex ?? "", p.Protocol || "", p.Port || "", p.CidrBlock || p.Ipv6CidrBlock || p.SecurityGroupId || "",
    tag(p.Action === "DROP" ? "err" : "ok", p.Action || ""), p.PolicyDescription || ""];
  const ociRow = (dir) => (r) => [dir, OCI_PROTO[r.protocol] || r.protocol, ociPorts(r), r.source || r.destination || "",
    r.isStateless ? "stateless" : "stateful", r.description || ""];
  fill("firewalls",
    el("h3", {}, "Tencent security groups"),
    sgs.length === 0 ? el("p", {class: "empty"}, "none") : sgs.map((g) => el("div", {"data-sg": g.id},
      el("p", {}, el("strong", {}, g.id), ` ${g.name || ""} `, el("span", {class: "meta"}, `version ${g.version || 0}${g.clbs && g.clbs.length ? " · CLBs " + list(g.clbs) : ""}`)),
      table(["direction", "index", "protocol", "port", "source/destination", "action", "description"],
        [...(g.ingress || []).map(sgRow("in")), ...(g.egress || []).map(sgRow("out"))]))),
    el("h3", {}, "OCI security lists"),
    (net.securityLists || []).length === 0 ? el("p", {class: "empty"}, "none") : net.securityLists.map((s) => el("div", {"data-seclist": s.id},
      el("p", {}, el("strong", {}, s.displayName || s.id), el("span", {class: "meta"}, ` ${s.id} · VCN ${s.vcnId}`)),
      table(["direction", "protocol", "ports", "source/destination", "state", "description"],
        [...(s.ingressSecurityRules || []).map(ociRow("in")), ...(s.egressSecurityRules || []).map(ociRow("out"))]))),
    el("h3", {}, "OCI network security groups"),
    (net.networkSecurityGroups || []).length === 0 ? el("p", {class: "empty"}, "none") : net.networkSecurityGroups.map((n) => el("div", {"data-nsg": n.id},
      el("p", {}, el("strong", {}, n.displayName || n.id), el("span", {class: "meta"}, ` ${n.id} · VCN ${n.vcnId}`)),
      table(["direction", "protocol", "ports", "source/destination", "state", "description"],
        (n.securityRules || []).map((r) => ociRow(r.direction === "EGRESS" ? "out" : "in")(r))))));
}

function calls(st) {
  const cs = (st.calls || []).slice(-60).reverse(); // newest first
  fill("calls", el("p", {class: "meta"}, `the last ${cs.length} of ${(st.calls || []).length} kept, newest first`),
    table(["time", "dialect", "service", "action", "code", "ms", "caller key", "message"], cs.map((c) => [
      new Date(c.time).toLocaleTimeString(), c.dialect, c.service || "", c.action, tag(c.code === "OK" ? "ok" : "err", c.code),
      c.durationMs, c.principal || "", c.message || ""])));
}

// ---- polling ----

function draw(st) {
  for (const f of [faults, instances, tencentCLBs, ociLBs, routes, firewalls, calls]) f(st);
}

async function poll() {
  const status = document.getElementById("status");
  try {
    const r = await fetch("/admin/console/state", {cache: "no-store"});
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const st = await r.json();
    draw(st);
    status.textContent = "live";
    status.dataset.state = "live";
    document.getElementById("updated").textContent = `· cloud time ${new Date(st.time).toLocaleTimeString()} · region ${st.region}`;
    document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
  } catch (e) {
    // cloudsim stopped or restarting: say so and keep trying (not a page error).
    status.textContent = `cloudsim unreachable (${e.message}); retrying`;
    status.dataset.state = "error";
  }
  setTimeout(poll, POLL_MS);
}

poll();
