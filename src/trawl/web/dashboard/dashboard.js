"use strict";
// The crawl dashboard: polls the API once a second; no framework, no remote assets, no
// inline styles or scripts (CSP default-src 'self'). The page is drawn once; each tick
// refreshes only the live parts, so what the operator types in a form stays.
(function () {
  const app = document.getElementById("app");
  const crawl = document.body.dataset.crawl;
  const tokenInput = document.getElementById("token");
  tokenInput.value = sessionStorage.getItem("trawl-token") || "";
  tokenInput.addEventListener("change", () => sessionStorage.setItem("trawl-token", tokenInput.value));
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const num = (n) => Number(n || 0).toLocaleString("en");
  const none = '<tr><td class="muted">none</td></tr>';
  const rows = (obj) => Object.entries(obj || {}).sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td class="n">${num(v)}</td></tr>`).join("") || none;
  const hostRows = (list) => (list || []).map((h) => `<tr><td><a href="#" data-host="${esc(h.host)}">${esc(h.host)}</a></td>`
    + `<td class="n">${num(h.count)}</td></tr>`).join("") || none;
  const $ = (id) => document.getElementById(id);
  const when = (iso) => (iso ? new Date(iso).toLocaleTimeString("en-GB") : "—");
  let events = [];
  let host = null;

  async function call(method, path, body) {
    const r = await fetch(path, {
      method,
      headers: { Authorization: "Bearer " + tokenInput.value, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let doc = {};
    try { doc = await r.json(); } catch (e) { /* no body */ }
    return { ok: r.ok, status: r.status, doc };
  }

  function say(text, ok) {
    const msg = $("msg");
    msg.textContent = text;
    msg.className = ok ? "ok" : "bad";
  }

  function failure(res) {
    const fields = Object.entries(res.doc.fields || {}).map(([k, v]) => `${k}: ${v}`).join("; ");
    return `${res.status}: ${res.doc.error || "failed"}${fields && !String(res.doc.error).includes(fields) ? " (" + fields + ")" : ""}`;
  }

  // -- drawings ------------------------------------------------------------------

  function chart(history) {
    const pts = (history || []).slice(-300);
    if (pts.length < 2) return '<svg viewBox="0 0 600 170" class="chart"><text x="8" y="20" class="axis">waiting for samples…</text></svg>';
    const max = Math.max(1, ...pts.map((p) => p[1]));
    const t0 = pts[0][0], span = Math.max(1, pts[pts.length - 1][0] - t0);
    const x = (t) => 40 + ((t - t0) / span) * 552;
    const y = (v) => 150 - (v / max) * 130;
    const line = pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    const area = `40,150 ${line} ${x(pts[pts.length - 1][0]).toFixed(1)},150`;
    const minutes = span >= 120 ? `${Math.round(span / 60)} min` : `${Math.round(span)} s`;
    return `<svg viewBox="0 0 600 170" class="chart" role="img" aria-label="pages per second over time">
      <line x1="40" y1="20" x2="592" y2="20" class="grid"/><line x1="40" y1="85" x2="592" y2="85" class="grid"/>
      <line x1="40" y1="150" x2="592" y2="150" class="axisline"/>
      <text x="36" y="24" class="axis" text-anchor="end">${max.toFixed(1)}</text>
      <text x="36" y="154" class="axis" text-anchor="end">0</text>
      <text x="40" y="166" class="axis">${minutes} ago</text><text x="592" y="166" class="axis" text-anchor="end">now</text>
      <polygon points="${area}" class="area"/><polyline points="${line}" class="line"/></svg>`;
  }

  function statusMix(codes) {
    const entries = Object.entries(codes || {}).sort((a, b) => a[0].localeCompare(b[0]));
    const total = entries.reduce((s, [, n]) => s + n, 0);
    if (!total) return '<p class="muted">no answers yet</p>';
    let at = 0;
    const bars = entries.map(([code, n]) => {
      const w = (n / total) * 600;
      const rect = `<rect x="${at.toFixed(1)}" y="0" width="${Math.max(w, 1).toFixed(1)}" height="22" class="c${esc(code[0])}xx"><title>${esc(code)}: ${n}</title></rect>`;
      at += w;
      return rect;
    }).join("");
    const legend = entries.map(([code, n]) => `<tr><td><span class="dot c${esc(code[0])}xx"></span>${esc(code)}</td>`
      + `<td class="n">${num(n)}</td><td class="n muted">${((n / total) * 100).toFixed(1)} %</td></tr>`).join("");
    return `<svg viewBox="0 0 600 22" class="mix" preserveAspectRatio="none">${bars}</svg><table>${legend}</table>`;
  }

  function eventRow(e) {
    let what = e.url || "";
    if (e.type === "crawl.seeds") what = `${(e.seeds || []).length} seed(s), ${e.added} new (revision ${e.revision})`;
    if (e.type === "crawl.changed") what = `${esc(JSON.stringify(e.set))} (revision ${e.revision})`;
    return `<tr><td class="muted">${esc(when(e.time))}</td><td>${esc(e.type)}</td><td class="url">${e.type === "crawl.changed" ? what : esc(what)}</td></tr>`;
  }

  // -- one crawl -----------------------------------------------------------------

  function skeleton(c) {
    const limits = (c.spec && c.spec.limits) || {};
    const field = (name, label, value, step) => `<label>${label}<input name="${name}" type="number" min="0" step="${step}" value="${value ?? ""}" placeholder="${value === undefined ? "default" : ""}"></label>`;
    app.innerHTML = `<h2 class="title"><span id="name"></span> <span class="state" id="state"></span> <span id="why" class="muted"></span></h2>
      <p class="controls steer"><button data-a="pause">Pause</button><button data-a="resume">Resume</button><button data-a="stop">Stop</button><span id="msg"></span></p>
      <div id="live"></div>
      <section id="hostpanel" class="hidden"></section>
      <div class="grid2 steer">
      <section><h2>add seeds</h2><form id="seeds"><textarea name="seeds" rows="3" placeholder="one URL a line"></textarea>
        <button type="submit">Add seeds</button></form></section>
      <section><h2>limits and delay</h2><form id="limits" class="fields">
        ${field("max_pages", "max pages", limits.max_pages, 1)}${field("max_depth", "max depth", limits.max_depth, 1)}
        ${field("max_per_host", "max per host", limits.max_per_host, 1)}${field("max_duration", "max duration (s)", limits.max_duration, "any")}
        ${field("delay", "delay (s)", c.spec ? c.spec.delay : undefined, "any")}
        <button type="submit">Apply</button></form></section>
      <section><h2>a host's override</h2><form id="hostrule" class="fields">
        <label>host (and its subdomains)<input name="host" autocomplete="off" placeholder="example.org"></label>
        ${field("delay", "delay (s)", undefined, "any")}${field("budget", "budget (URLs, 0: none)", undefined, 1)}
        <label>priority (lower first)<input name="priority" type="number" min="-1000" max="1000" step="1" placeholder="0"></label>
        <label><input name="block" type="checkbox"> block it</label>
        <label><input name="remove" type="checkbox"> remove its override</label>
        <button type="submit">Set</button></form></section>
      </div>
      <section class="danger steer"><h2>delete</h2><form id="delete">
        <label>type the crawl's id to delete it and all its data <input name="confirm" autocomplete="off" placeholder="${esc(c.id)}"></label>
        <button type="submit">Delete</button></form></section>`;
    $("seeds").addEventListener("submit", async (e) => {
      e.preventDefault();
      const seeds = e.target.seeds.value.split(/\s+/).filter(Boolean);
      const res = await call("POST", `/v1/crawls/${encodeURIComponent(crawl)}/seeds`, { seeds });
      say(res.ok ? `seeds recorded (revision ${res.doc.revision})` : failure(res), res.ok);
      if (res.ok) e.target.seeds.value = "";
    });
    $("limits").addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = { limits: {} };
      for (const input of e.target.querySelectorAll("input")) {
        if (input.value === "" || input.defaultValue === input.value) continue;
        const value = Number(input.value);
        if (input.name === "delay") body.delay = value; else body.limits[input.name] = value;
      }
      if (!Object.keys(body.limits).length) delete body.limits;
      const res = await call("PATCH", `/v1/crawls/${encodeURIComponent(crawl)}`, body);
      say(res.ok ? `change recorded (revision ${res.doc.revision})` : failure(res), res.ok);
      if (res.ok) for (const input of e.target.querySelectorAll("input")) input.defaultValue = input.value;
    });
    $("hostrule").addEventListener("submit", async (e) => {
      e.preventDefault();
      const f = e.target;
      const name = f.host.value.trim();
      let rule = null;
      if (!f.remove.checked) {
        rule = {};
        for (const key of ["delay", "budget", "priority"]) if (f[key].value !== "") rule[key] = Number(f[key].value);
        if (f.block.checked) rule.block = true;
      }
      const res = await call("PATCH", `/v1/crawls/${encodeURIComponent(crawl)}`, { hosts: { [name]: rule } });
      say(res.ok ? `change recorded (revision ${res.doc.revision})` : failure(res), res.ok);
    });
    $("delete").addEventListener("submit", async (e) => {
      e.preventDefault();
      const res = await call("DELETE", `/v1/crawls/${encodeURIComponent(crawl)}`, { confirm: e.target.confirm.value });
      if (res.ok) { location.href = "/crawls"; return; }
      say(failure(res), false);
    });
    $("live").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-host]");
      if (!a) return;
      e.preventDefault();
      host = a.dataset.host;
      drill().then(() => $("hostpanel").scrollIntoView({ block: "nearest" }));
    });
  }

  async function drill() {
    if (!host) return;
    const panel = $("hostpanel");
    const r = await fetch(`/v1/hosts/${encodeURIComponent(host)}?crawl=${encodeURIComponent(crawl)}`);
    const h = await r.json();
    panel.className = "";
    if (!r.ok) { panel.innerHTML = `<h2>${esc(host)}</h2><p class="muted">${esc(h.error)}</p>`; return; }
    const robots = (h.robots || []).map((o) => `<tr><td>${esc(o.origin)}</td><td>${esc(o.outcome)}</td><td>${esc(o.http_status ?? "—")}</td>`
      + `<td>${esc(o.crawl_delay ?? "—")}</td><td>${esc(when(o.expires_at))}</td></tr>`).join("") || none;
    const errors = (h.errors || []).map((x) => `<tr><td>${esc(x.reason)}</td><td class="n">${num(x.count)}</td></tr>`).join("") || none;
    const shared = h.shared ? `${h.shared.busy ? "a fetch in flight" : "idle"}, next contact ${esc(when(h.shared.next_contact))}, largest asked delay ${h.shared.gap.toFixed(2)} s` : "not shared";
    panel.innerHTML = `<h2>host ${esc(h.host)} <a href="#" id="closehost" class="muted">close</a></h2>
      <div class="cards">${[["queued", num(h.queued)], ["admitted", num(h.admitted)], ["fetched", num(h.pages_fetched)],
        ["delay", `${h.delay} s`], ["next contact", when(h.next_contact)], ["budget", h.budget === null ? "none" : num(h.budget)]]
        .map(([k, v]) => `<div class="card"><span class="muted">${k}</span><b>${esc(v)}</b></div>`).join("")}</div>
      <p class="muted">across crawls: ${shared}${h.demoted ? `; demoted: ${esc(h.demoted)}` : ""}</p>
      <div class="grid2"><section><h2>robots.txt</h2><table><tr><th>origin</th><th>state</th><th>HTTP</th><th>crawl-delay</th><th>expires</th></tr>${robots}</table></section>
      <section><h2>errors</h2><table>${errors}</table></section></div>`;
    $("closehost").addEventListener("click", (e) => { e.preventDefault(); host = null; panel.className = "hidden"; });
  }

  function renderOne(c) {
    if (!$("live")) skeleton(c);
    $("name").textContent = c.name || c.id;
    const state = $("state");
    state.textContent = c.state;
    state.className = `state ${c.state}`;
    $("why").textContent = c.error ? `error: ${c.error}` : c.stopped ? `stopped: ${c.stopped}` : "";
    $("delete").querySelector("button").disabled = !["finished", "failed"].includes(c.state);
    // `main`, the data directory's own trawl crawl, is served read-only: no controls.
    for (const part of document.querySelectorAll(".steer")) part.hidden = c.managed === false;
    const p = c.progress;
    const cards = [["known", p.known], ["fetched", p.fetched], ["parsed", p.parsed], ["failed", p.failed],
      ["waiting", p.queued + p.waiting], ["skipped", p.skipped], ["pages/s", p.pages_per_second.toFixed(1)],
      ["bytes", num(p.bytes)], ["hosts active", p.hosts_active], ["errors", p.errors]];
    $("live").innerHTML = `<div class="cards">${cards.map(([k, v]) => `<div class="card"><span class="muted">${k}</span><b data-k="${k}">${typeof v === "number" ? num(v) : v}</b></div>`).join("")}</div>
      <div class="grid2"><section><h2>pages/s</h2>${chart(p.history)}</section>
      <section><h2>status codes</h2>${statusMix(p.status_codes)}</section>
      <section><h2>top hosts by pages</h2><table>${hostRows(p.top_hosts_by_pages)}</table></section>
      <section><h2>top hosts by errors</h2><table>${hostRows(p.top_hosts_by_errors)}</table></section>
      <section><h2>failures by reason</h2><table>${rows(p.failed_by_reason)}</table></section>
      <section><h2>errors by kind</h2><table>${rows(p.errors_by_kind)}</table></section>
      <section><h2>skipped by reason</h2><table>${rows(p.skipped_by_reason)}</table></section>
      <section><h2>recent events</h2><table id="events">${events.slice(-10).reverse().map(eventRow).join("") || none}</table></section></div>`;
  }

  // -- the list, and a new crawl ---------------------------------------------------

  function listSkeleton() {
    app.innerHTML = `<section><h2>crawls</h2><table id="crawls"></table></section>
      <section><h2>new crawl</h2><form id="newcrawl" class="fields">
        <label>name<input name="name" autocomplete="off"></label>
        <label class="wide">seeds<textarea name="seeds" rows="3" placeholder="one URL a line"></textarea></label>
        <label>scope<select name="scope"><option>host</option><option>domain</option><option>any</option><option>allowlist</option></select></label>
        <label>max pages<input name="max_pages" type="number" min="1"></label>
        <label>max depth<input name="max_depth" type="number" min="1"></label>
        <label>delay (s)<input name="delay" type="number" min="0" step="any" placeholder="1"></label>
        <label class="wide">more settings (JSON, as POST /v1/crawls takes them)<textarea name="more" rows="2" placeholder='{"allowed_hosts": [], "purpose": "search"}'></textarea></label>
        <button type="submit">Start crawl</button><span id="msg"></span></form></section>`;
    $("newcrawl").addEventListener("submit", async (e) => {
      e.preventDefault();
      const f = e.target;
      let body;
      try { body = f.more.value.trim() ? JSON.parse(f.more.value) : {}; } catch (err) { say("more settings: not JSON", false); return; }
      body.seeds = f.seeds.value.split(/\s+/).filter(Boolean);
      if (f.name.value) body.name = f.name.value;
      body.scope = f.scope.value;
      const limits = Object.assign({}, body.limits);
      for (const k of ["max_pages", "max_depth"]) if (f[k].value) limits[k] = Number(f[k].value);
      if (Object.keys(limits).length) body.limits = limits;
      if (f.delay.value) body.delay = Number(f.delay.value);
      const res = await call("POST", "/v1/crawls", body);
      if (res.ok) { location.href = `/crawls/${encodeURIComponent(res.doc.id)}`; return; }
      say(failure(res), false);
    });
  }

  function renderList(list) {
    if (!$("crawls")) listSkeleton();
    $("crawls").innerHTML = `<tr><th>crawl</th><th>state</th><th>fetched</th><th>known</th><th>failed</th><th>pages/s</th></tr>
      ${list.crawls.map((c) => `<tr><td><a href="/crawls/${encodeURIComponent(c.id)}">${esc(c.name || c.id)}</a></td>
      <td><span class="state ${esc(c.state)}">${esc(c.state)}</span></td><td class="n">${num(c.progress.fetched)}</td>
      <td class="n">${num(c.progress.known)}</td><td class="n">${num(c.progress.failed)}</td><td class="n">${c.progress.pages_per_second.toFixed(1)}</td></tr>`).join("")
      || '<tr><td class="muted">no crawls yet</td></tr>'}`;
  }

  // -- live ------------------------------------------------------------------------

  async function control(action) {
    const res = await call("POST", `/v1/crawls/${encodeURIComponent(crawl)}/${action}`);
    say(res.ok ? `${action}: ${res.doc.state}` : failure(res), res.ok);
    tick();
  }

  let ticks = 0;
  async function tick() {
    try {
      if (!crawl) { renderList(await (await fetch("/v1/crawls")).json()); return; }
      const r = await fetch(`/v1/crawls/${encodeURIComponent(crawl)}`);
      if (r.status === 404) { app.innerHTML = '<p class="muted">no such crawl (deleted?) — <a href="/crawls">all crawls</a></p>'; return; }
      renderOne(await r.json());
      if (host && ++ticks % 2 === 0) drill();
    } catch (e) { /* the server restarts: try again next second */ }
  }

  if (crawl) {
    // One live stream: the server keeps its place in the log and a reconnect resumes
    // after the last id (Last-Event-ID), so no poll reads the log again from the start.
    const source = new EventSource(`/v1/events?crawl=${encodeURIComponent(crawl)}`);
    const onEvent = (m) => { events.push(JSON.parse(m.data)); if (events.length > 50) events = events.slice(-50); };
    for (const type of ["page.new", "page.changed", "crawl.seeds", "crawl.changed"]) source.addEventListener(type, onEvent);
  }
  // One delegated listener: the live parts are redrawn every second, their buttons too.
  app.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-a]");
    if (b) control(b.dataset.a);
  });
  tick();
  setInterval(tick, 1000);
})();
