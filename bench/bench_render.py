"""What rendering costs: CPU and memory per rendered page, rendered pages/s, and the share
of pages ``--render auto`` renders, with and without JavaScript on the web.

Run with ``.venv/bin/python bench/bench_render.py [--hosts 16] [--pages 16]
[--sample-hosts 20] [--sample-pages 30] [--render-pages 2] [--keep]``.

Two webs, each as static files served by our own nginx (see bench_crawl.py), every
crawl ``python -m trawl crawl --delay 0`` on all hosts under a measuring process
(bench_crawl's ``--measure``: exact user + system CPU of the whole process tree,
Chromium and Playwright's driver included, and the peak of the RSS summed over it):

1. The sample web (``trawl.testing.sampleweb``: no JavaScript at all), crawled with
   ``--render never`` and ``--render auto``: what ``auto`` costs on a web it should
   leave alone (share rendered: 0, no browser started) as a CPU ratio.
2. A JavaScript web: ``--hosts`` hosts, each with an index (static, no scripts) and
   ``--pages`` pages, every other one an application shell whose script (/app.js)
   fetches its article from a JSON API (/api/N.json), the others server-rendered
   articles with one analytics script. Crawled three times: ``never`` (the plain
   crawl of the same pages), ``auto`` (should render exactly the shells) and
   ``always`` (every page). CPU-seconds per rendered page = (always - never) / pages
   (the render's own cost), and whole-tree CPU per 1,000 pages for each run; rendered
   pages/s from ``always``: pages / wall time, ``--render-pages`` at once.

The machine's load (``os.getloadavg``) is printed before and after. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl as bc
from trawl.testing._sample_text import text_generator

APP_JS = """(function () {
  var root = document.getElementById("root");
  var id = document.body.getAttribute("data-id");
  fetch("/api/" + id + ".json").then(function (r) { return r.json(); }).then(function (a) {
    root.innerHTML = "<article><h1>" + a.title + "</h1>" +
      a.paragraphs.map(function (p) { return "<p>" + p + "</p>"; }).join("") +
      '</article><p><a href="/">Home</a></p>';
  });
})();
"""
ANALYTICS_JS = "window.analytics = {page: location.pathname};\n"


def _document(title: str, body: str, *, attrs: str = "", scripts: str = "") -> bytes:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head>\n<body{attrs}>\n{body}\n{scripts}\n"
        "</body></html>\n"
    ).encode()


def build_js_web(root: Path, hosts: int, pages: int, seed: int) -> tuple[bc.Web, int]:
    """The JavaScript web as files and an nginx config; returns it and its shells."""
    text = text_generator(seed, 2048)
    port = bc.free_port()
    base = root / "web"
    names = [f"js{i:03d}.test" for i in range(hosts)]
    blocks = [f"server {{\n    listen {bc.LOOPBACK}:{port} default_server;\n    return 421;\n}}"]
    page_urls: set[str] = set()
    shells = 0
    for host in names:
        site = base / host
        (site / "api").mkdir(parents=True)
        (site / "robots.txt").write_text("User-agent: *\nDisallow:\n")
        (site / "app.js").write_text(APP_JS)
        (site / "analytics.js").write_text(ANALYTICS_JS)
        links = []
        for n in range(1, pages + 1):
            rng = random.Random(f"{seed}-{host}-{n}")
            title = f"{host} article {n}"
            paragraphs = [html.escape(text.paragraph(rng)) for _ in range(5)]
            folder = site / "p" / str(n)
            folder.mkdir(parents=True)
            if n % 2 == 0:
                shells += 1
                (site / "api" / f"{n}.json").write_text(
                    json.dumps({"title": title, "paragraphs": paragraphs})
                )
                body = '<div id="root"><p>Loading…</p></div>'
                page = _document(
                    title,
                    body,
                    attrs=f' data-id="{n}"',
                    scripts='<script src="/app.js"></script>',
                )
            else:
                article = "".join(f"<p>{p}</p>" for p in paragraphs)
                body = f'<article><h1>{title}</h1>{article}</article><p><a href="/">Home</a></p>'
                page = _document(title, body, scripts='<script src="/analytics.js" async></script>')
            (folder / "index.html").write_bytes(page)
            links.append(f'<li><a href="/p/{n}/">{title}</a></li>')
            page_urls.add(f"http://{host}:{port}/p/{n}/")
        intro = html.escape(text.paragraph(random.Random(host)))
        index = f"<h1>{host}</h1><p>{intro}</p><ul>{''.join(links)}</ul>"
        (site / "index.html").write_bytes(_document(host, index))
        page_urls.add(f"http://{host}:{port}/")
        blocks.append(
            f"server {{\n    listen {bc.LOOPBACK}:{port};\n    server_name {host};\n"
            f"    root {site};\n    index index.html;\n"
            "    location / {\n        try_files $uri $uri/index.html =404;\n    }\n}"
        )
    conf = base / "nginx.conf"
    conf.write_text("\n".join(blocks) + "\n")
    for d in (root, base):
        d.chmod(0o755)
    seeds, hosts_file, resolve = root / "seeds.txt", root / "hosts.txt", root / "hosts.map"
    seeds.write_text("".join(f"http://{h}:{port}/\n" for h in names))
    hosts_file.write_text("".join(h + "\n" for h in names))
    resolve.write_text("".join(f"{h}={bc.LOOPBACK}\n" for h in names))
    web = bc.Web(root, port, names, {}, {}, page_urls, 0, seeds, hosts_file, resolve, conf)
    return web, shells


@dataclass
class Run:
    name: str
    rc: int
    wall: float
    cpu: float  # whole process tree, user + system
    peak_rss: int  # summed over the tree's processes
    pages: int  # 200 responses
    rendered: int
    decided: int  # pages the render policy looked at
    render_ms: int  # in the browser (from the page's slot to its DOM)
    wait_ms: int  # waiting for a slot

    @property
    def per_k(self) -> float:
        return 1000 * self.cpu / max(1, self.pages)


def crawl(web: bc.Web, work: Path, name: str, mode: str, render_pages: int) -> Run:
    data = work / f"{name}-data"
    cmd = bc.trawl_cmd(web, data, "--render", mode, "--render-pages", str(render_pages))
    print(f"\n$ {bc.show_cmd(cmd)}", flush=True)
    m = bc.measure(cmd, work, name)
    stats, _states = bc.trawl_stats(data)
    c = stats["counters"]
    rendered = c.get("render:rendered", 0)
    run = Run(
        name,
        m.rc,
        m.wall,
        m.cpu,
        m.peak_rss_sum,
        stats["http statuses"].get("200", 0),
        rendered,
        rendered + c.get("render:not rendered", 0),
        c.get("render:ms", 0),
        c.get("render:wait ms", 0),
    )
    share = f"{rendered}/{run.decided} = {rendered / run.decided:.1%}" if run.decided else "none"
    roles: dict[str, float] = {}
    for role, cpu in m.sampled_cpu_by_role.items():
        kind = _kind(role)
        roles[kind] = roles.get(kind, 0.0) + cpu
    print(
        f"  {name}: exit {m.rc}, wall {m.wall:.1f} s, CPU {m.cpu:.1f} s ({run.per_k:.1f} CPU-s "
        f"per 1,000 pages), peak RSS (sum over {m.peak_procs} processes) "
        f"{m.peak_rss_sum / 2**20:,.0f} MiB; pages {run.pages}, documents "
        f"{stats['documents']}; rendered {share}; subresource requests "
        f"{c.get('render:requests', 0)}; no DOM {c.get('render:no dom', 0)}, deadline "
        f"{c.get('render:deadline', 0)}, browser lost {c.get('render:browser lost', 0)}; "
        f"browser restarts "
        + (
            ", ".join(f"{k[15:]} {v}" for k, v in c.items() if k.startswith("render:restart:"))
            or "none"
        )
        + f"; renders asked for by a learned host {c.get('render:learned host', 0)}\n"
        + "    CPU by process (sampled): "
        + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(roles.items(), key=lambda kv: -kv[1])),
        flush=True,
    )
    return run


def _kind(role: str) -> str:
    """A process of the crawl's tree, by its command line (bench_crawl's role names: the
    first 40 characters when first seen; the browser is first seen as the wrapper that
    starts it, ``python -I .../chromium``)."""
    if "python -I" in role or role.startswith(("/bin/sh /usr/bin/chromium", "/proc/self/exe")):
        return "chromium browser" if "utility" not in role else "chromium utility"
    if "chrom" in role:
        return "chromium " + (
            role.split("--type=", 1)[1].split()[0] if "--type=" in role else "browser"
        )
    if "node" in role or "playwright" in role:
        return "playwright driver"
    if "trawl" in role:
        return "crawler"
    return role


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--hosts", type=int, default=16, help="hosts of the JavaScript web")
    p.add_argument("--pages", type=int, default=16, help="pages per host (half are shells)")
    p.add_argument("--sample-hosts", type=int, default=20)
    p.add_argument("--sample-pages", type=int, default=30)
    p.add_argument("--render-pages", type=int, default=2, help="pages rendered at once")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", action="store_true", help="keep the generated webs and data")
    args = p.parse_args(argv)
    bc.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="bench-render-"))
    load_before = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load_before} at the start", flush=True)
    try:
        return _run(args, work)
    finally:
        print(f"\nload average {os.getloadavg()} at the end (started at {load_before})")
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, work: Path) -> int:
    # 1. The sample web: no JavaScript, so auto must render nothing.
    sample = bc.build_web(work / "sample", args.sample_hosts, args.sample_pages, args.seed)
    with bc.Nginx(work / "sample" / "nginx", sample.sites_conf, sample.port):
        never = crawl(sample, work, "sample-never", "never", args.render_pages)
        auto = crawl(sample, work, "sample-auto", "auto", args.render_pages)
    # 2. The JavaScript web.
    web, shells = build_js_web(work / "js", args.hosts, args.pages, args.seed)
    total = len(web.pages)
    print(f"\nJavaScript web: {args.hosts} hosts, {total} pages, {shells} of them shells")
    with bc.Nginx(work / "js" / "nginx", web.sites_conf, web.port):
        js_never = crawl(web, work, "js-never", "never", args.render_pages)
        js_auto = crawl(web, work, "js-auto", "auto", args.render_pages)
        js_always = crawl(web, work, "js-always", "always", args.render_pages)
    mib = 2**20
    rendered = max(1, js_always.rendered)
    print("\n== figures")
    print(
        f"sample web (no JavaScript): auto rendered {auto.rendered} of {auto.decided} pages; "
        f"CPU per 1,000 pages never {never.per_k:.2f} s, auto {auto.per_k:.2f} s "
        f"(ratio {auto.per_k / never.per_k:.2f})"
    )
    print(
        f"JavaScript web: auto rendered {js_auto.rendered} of {js_auto.decided} pages (the "
        f"shells: {shells} of {total}); always {js_always.rendered} of {js_always.decided}"
    )
    print(
        f"per rendered page, whole process tree with Chromium: (always - never) "
        f"{(js_always.cpu - js_never.cpu) / rendered:.3f} CPU-s; CPU per 1,000 pages never "
        f"{js_never.per_k:.1f} s, auto {js_auto.per_k:.1f} s, always {js_always.per_k:.1f} s"
    )
    print(
        f"peak RSS of the process tree: never {js_never.peak_rss / mib:,.0f} MiB, auto "
        f"{js_auto.peak_rss / mib:,.0f} MiB, always {js_always.peak_rss / mib:,.0f} MiB "
        f"(always per page rendered at once: {js_always.peak_rss / mib / args.render_pages:,.0f})"
    )
    print(
        f"rendered pages/s ({args.render_pages} at once, {os.cpu_count()} cores): always "
        f"{rendered / js_always.wall:.2f} ({rendered} in {js_always.wall:.1f} s), auto "
        f"{js_auto.rendered / js_auto.wall:.2f}; mean render "
        f"{js_always.render_ms / rendered / 1000:.2f} s in the browser, "
        f"{js_always.wait_ms / rendered / 1000:.2f} s waiting for it"
    )
    failed = [r.name for r in (never, auto, js_never, js_auto, js_always) if r.rc != 0]
    if failed:
        print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
