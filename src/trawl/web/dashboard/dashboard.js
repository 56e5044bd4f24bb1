"use strict";
// The crawl dashboard: polls the API once a second; no framework, no remote assets.
(function () {
  const app = document.getElementById("app");
  const crawl = document.body.dataset.crawl;
  const tokenInput = document.getElementById("token");
  tokenInput.value = sessionStorage.getItem("trawl-token") || "";
  tokenInput.addEventListener("change", () => sessionStorage.setItem("trawl-token", tokenInput.value));
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const num = (n) => Number(n || 0).toLocaleString("en");
  const rows = (obj) => Object.entries(obj || {}).sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${num(v)}</td></tr>`).join("") || '<tr><td class="muted">none</td></tr>';
  const hostRows = (list) => (list || []).map((h) => `<tr><td>${esc(h.host)}</td><td>${num(h.count)}</td></tr>`).join("")
    || '<tr><td class="muted">none</td></tr>';
  let events = [];
  if (crawl) {
    // One live stream: the server keeps its place in the log and a reconnect resumes
    // after the last id (Last-Event-ID), so no poll reads the log again from the start.
    const source = new EventSource(`/v1/events?crawl=${encodeURIComponent(crawl)}`);
    const onEvent = (m) => { events.push(JSON.parse(m.data)); if (events.length > 50) events = events.slice(-50); };
    source.addEventListener("page.new", onEvent);
    source.addEventListener("page.changed", onEvent);
  }

  function chart(history) {
    const pts = (history || []).slice(-120);
    if (pts.length < 2) return '<svg viewBox="0 0 600 160"></svg>';
    const max = Math.max(1, ...pts.map((p) => p[1]));
    const xy = pts.map((p, i) => `${(i / (pts.length - 1)) * 590 + 5},${150 - (p[1] / max) * 140}`).join(" ");
    return `<svg viewBox="0 0 600 160" role="img" aria-label="pages per second">
      <text x="6" y="14" font-size="11" fill="#667">${max.toFixed(1)} pages/s</text>
      <polyline fill="none" stroke="#3b6fd8" stroke-width="2" points="${xy}"/></svg>`;
  }

  async function control(action) {
    const r = await fetch(`/v1/crawls/${encodeURIComponent(crawl)}/${action}`, {
      method: "POST", headers: { Authorization: "Bearer " + tokenInput.value } });
    const body = await r.json();
    document.getElementById("msg").textContent = r.ok ? "" : body.error;
    tick();
  }

  function renderOne(c) {
    const p = c.progress;
    const cards = [["known", p.known], ["fetched", p.fetched], ["parsed", p.parsed], ["failed", p.failed],
      ["waiting", p.queued + p.waiting], ["skipped", p.skipped], ["pages/s", p.pages_per_second.toFixed(1)],
      ["bytes", num(p.bytes)], ["hosts active", p.hosts_active], ["errors", p.errors]];
    app.innerHTML = `<h2>${esc(c.name || c.id)} <span class="state ${esc(c.state)}" id="state">${esc(c.state)}</span></h2>
      <p><button data-a="pause">Pause</button><button data-a="resume">Resume</button><button data-a="stop">Stop</button><span id="msg"></span></p>
      <div class="cards">${cards.map(([k, v]) => `<div class="card"><span class="muted">${k}</span><b data-k="${k}">${typeof v === "number" ? num(v) : v}</b></div>`).join("")}</div>
      <section style="margin-top:14px"><h2>pages/s</h2>${chart(p.history)}</section>
      <div class="grid2"><section><h2>status codes</h2><table>${rows(p.status_codes)}</table></section>
      <section><h2>skipped by reason</h2><table>${rows(p.skipped_by_reason)}</table></section>
      <section><h2>top hosts by pages</h2><table>${hostRows(p.top_hosts_by_pages)}</table></section>
      <section><h2>top hosts by errors</h2><table>${hostRows(p.top_hosts_by_errors)}</table></section>
      <section><h2>errors by kind</h2><table>${rows(p.errors_by_kind)}</table></section>
      <section><h2>recent events</h2><table id="events">${events.slice(-8).reverse().map((e) =>
        `<tr><td>${esc(e.type)}</td><td>${esc(e.url)}</td></tr>`).join("") || '<tr><td class="muted">none</td></tr>'}</table></section></div>`;
  }

  function renderList(list) {
    app.innerHTML = `<section><h2>crawls</h2><table><tr><th>crawl</th><th>state</th><th>fetched</th><th>known</th><th>pages/s</th></tr>
      ${list.crawls.map((c) => `<tr><td><a href="/crawls/${encodeURIComponent(c.id)}">${esc(c.name || c.id)}</a></td>
      <td><span class="state ${esc(c.state)}">${esc(c.state)}</span></td><td>${num(c.progress.fetched)}</td>
      <td>${num(c.progress.known)}</td><td>${c.progress.pages_per_second.toFixed(1)}</td></tr>`).join("")}</table></section>`;
  }

  async function tick() {
    try {
      if (!crawl) { renderList(await (await fetch("/v1/crawls")).json()); return; }
      const r = await fetch(`/v1/crawls/${encodeURIComponent(crawl)}`);
      renderOne(await r.json());
    } catch (e) { /* the server restarts: try again next second */ }
  }
  // One delegated listener: the panel is redrawn every second, its buttons with it.
  app.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-a]");
    if (b) control(b.dataset.a);
  });
  tick();
  setInterval(tick, 1000);
})();
