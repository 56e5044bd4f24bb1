"""js.test: a site whose pages are built by their scripts, and jscdn.test, a third party.

Without a browser a crawler finds application shells (a mount point, a script, a
line of text); rendered, the pages have their articles, their links and their text.
Each page's ``rendered_text`` is a phrase only its rendered DOM has, ``script_links``
the links its scripts add, ``subresources`` what its scripts ask for.

js.test (robots.txt: Disallow /api/private/)
  /                    a server-rendered index (no scripts), linking every page below
  /app/articles        shell; /static/app.js renders the list: links /app/articles/1..3
  /app/articles/N      shell; app.js fetches /api/articles/N (JSON) and renders it, with
                       links to the next article and the list; each page also loads
                       jscdn.test/lib.js (a third party: loaded only when allowed; it
                       adds "Widget from the CDN")
  /app/about           shell; its text is in an inline script; adds a link to /hidden
  /hidden              a static page linked only by /app/about's script
  /feed                an endless feed: each scroll to the bottom fetches
                       /api/feed?page=N and appends five posts, forever
  /reach               its script tries 127.0.0.1, 127.0.0.2, 10.0.0.1, localhost and
                       [::1] (fetch), a POST, a beacon, a WebSocket, a popup and a
                       navigation to elsewhere.test; none may leave the browser
  /forever             renders its text, then asks /api/ping every 150 ms forever
                       (never quiet: the render ends at its deadline)
  /robots-api          its script fetches /api/private/text, which robots.txt disallows:
                       the text is not fetched, the page shows its fallback
  /busy                renders, then its script loops forever (no DOM can be taken:
                       parsed from its HTML, whose own words are "busy page's own words")
"""

from __future__ import annotations

import html
import json
import random

from tests.testweb._model import (
    ALLOW_ALL,
    HTML,
    Context,
    Link,
    Page,
    Resource,
    RobotsGroup,
    RobotsRules,
    Site,
    document,
)

ARTICLES = 3
FEED_POSTS = 5  # posts per page of the feed
PRIVATE_WORDS = "secret words of the private API"
JS = "text/javascript; charset=utf-8"
JSON = "application/json"

_APP_JS = """(function () {
  var root = document.getElementById("root");
  var body = document.body;
  var view = body.getAttribute("data-view");
  function esc(s) { var d = document.createElement("div"); d.textContent = s; return d.innerHTML; }
  function list(items) {
    return "<ul>" + items.map(function (i) {
      return '<li><a href="' + i[0] + '">' + esc(i[1]) + "</a></li>";
    }).join("") + "</ul>";
  }
  if (view === "list") {
    var items = [];
    for (var n = 1; n <= %(articles)d; n++) items.push(["/app/articles/" + n, "Article " + n]);
    root.innerHTML = "<h1>Articles</h1><p>Three articles, listed by the script.</p>" +
      list(items);
  } else if (view === "article") {
    var id = Number(body.getAttribute("data-id"));
    fetch("/api/articles/" + id, {headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (a) {
        var links = [["/app/articles", "All articles"]];
        if (id < %(articles)d) links.push(["/app/articles/" + (id + 1), "Next article"]);
        root.innerHTML = "<article><h1>" + esc(a.title) + "</h1>" +
          a.paragraphs.map(function (p) { return "<p>" + esc(p) + "</p>"; }).join("") +
          "</article>" + list(links);
      });
  }
})();
"""


def _shell(title: str, script: str, *, view: str = "", data_id: int | None = None) -> bytes:
    attrs = f' data-view="{view}"' if view else ""
    if data_id is not None:
        attrs += f' data-id="{data_id}"'
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n</head>\n<body{attrs}>\n"
        f'<div id="root"><p>Loading {html.escape(title.lower())}…</p></div>\n'
        "<noscript>You need to enable JavaScript to run this app.</noscript>\n"
        f"{script}\n</body>\n</html>\n"
    ).encode()


def _paragraphs(ctx: Context, key: str, n: int = 4) -> list[str]:
    rng = random.Random(key)
    return [ctx.text.paragraph(rng) for _ in range(n)]


def _phrase(paragraph: str) -> str:
    """A phrase of a paragraph as the text extractor keeps it (first eight words)."""
    return " ".join(paragraph.split()[:8])


class JsSite(Site):
    def dynamic(self, path: str, query: str) -> Resource | None:
        """/api/feed?page=N: the feed's posts, for any N (it never ends); /api/ping?t=."""
        if path == "/api/ping":
            return Resource(200, JSON, b'{"pong": true}')
        if path == "/api/feed" and query.startswith("page=") and query[5:].isdigit():
            first = int(query[5:]) * FEED_POSTS + 1
            posts = [
                f"Post {k} of the endless feed, written for scrolling readers."
                for k in range(first, first + FEED_POSTS)
            ]
            return Resource(200, JSON, json.dumps(posts).encode())
        return None


def js(ctx: Context) -> list[Site]:
    site = JsSite(
        "js.test",
        ctx,
        robots=RobotsRules((RobotsGroup(("*",), (("disallow", "/api/private/"),)),)),
    )
    cdn = Site("jscdn.test", ctx, robots=ALLOW_ALL)
    lib = cdn.url("/lib.js")
    cdn.routes["/lib.js"] = Resource(
        200,
        JS,
        b"document.body.insertAdjacentHTML('beforeend', '<p>Widget from the CDN</p>');\n",
    )
    cdn.text_page("/", "The CDN", [])
    app_js = site.url("/static/app.js")
    site.routes["/static/app.js"] = Resource(200, JS, (_APP_JS % {"articles": ARTICLES}).encode())
    script = '<script src="/static/app.js"></script>'

    def links(page_url: str, pairs: list[tuple[str, str]]) -> tuple[Link, ...]:
        page = Page(page_url)
        page.nav(pairs)
        return tuple(page.links)

    # The list, and the articles from the JSON API.
    list_url = site.url("/app/articles")
    site.routes["/app/articles"] = Resource(
        200,
        HTML,
        _shell("Articles", script, view="list"),
        shell=True,
        script_links=links(list_url, [(f"/app/articles/{n}", "") for n in range(1, ARTICLES + 1)]),
        rendered_text=("Three articles, listed by the script.",),
        subresources=(app_js,),
    )
    for n in range(1, ARTICLES + 1):
        paragraphs = _paragraphs(ctx, f"js-article-{n}")
        title = f"Client-rendered article {n}"
        api = f"/api/articles/{n}"
        site.routes[api] = Resource(
            200, JSON, json.dumps({"title": title, "paragraphs": paragraphs}).encode()
        )
        nxt = [("/app/articles", "")] + ([(f"/app/articles/{n + 1}", "")] if n < ARTICLES else [])
        url = site.url(f"/app/articles/{n}")
        scripts = f'{script}\n<script src="{lib}"></script>'
        site.routes[f"/app/articles/{n}"] = Resource(
            200,
            HTML,
            _shell(f"Article {n}", scripts, view="article", data_id=n),
            shell=True,
            script_links=links(url, nxt),
            rendered_text=(_phrase(paragraphs[0]),),
            subresources=(app_js, site.url(api), lib),
        )

    # Text in the script itself, and a link only the script adds.
    about = _paragraphs(ctx, "js-about", 3)
    about_script = (
        "<script>document.getElementById('root').innerHTML = "
        + json.dumps("<h1>About this app</h1>" + "".join(f"<p>{html.escape(p)}</p>" for p in about))
        + " + '<p><a href=\"/hidden\">A page only the script links</a></p>';</script>"
    )
    site.routes["/app/about"] = Resource(
        200,
        HTML,
        _shell("About", about_script),
        shell=True,
        script_links=links(site.url("/app/about"), [("/hidden", "")]),
        rendered_text=(_phrase(about[0]),),
    )
    site.text_page("/hidden", "Hidden from plain fetches", [("/", "Home")])

    _feed(site)
    _reach(site, ctx)
    _forever(site)
    _robots_api(site)
    _busy(site)
    site.text_page(
        "/",
        "A JavaScript site",
        [
            ("/app/articles", "Articles"),
            ("/app/about", "About"),
            ("/feed", "Feed"),
            ("/reach", "Reach"),
            ("/forever", "Forever"),
            ("/robots-api", "Private text"),
            ("/busy", "Busy"),
        ],
    )
    return [site, cdn]


def _feed(site: Site) -> None:
    script = """<script>
var next = 0, loading = false;
function more() {
  if (loading) return;
  loading = true;
  fetch("/api/feed?page=" + next).then(function (r) { return r.json(); }).then(function (posts) {
    var root = document.getElementById("root");
    if (next === 0) root.innerHTML = "<h1>The endless feed</h1>";
    posts.forEach(function (p) {
      var div = document.createElement("div");
      div.style.height = "400px";
      div.textContent = p;
      root.appendChild(div);
    });
    next += 1;
    loading = false;
  });
}
window.addEventListener("scroll", function () {
  if (window.innerHeight + window.scrollY >= document.body.offsetHeight - 100) more();
});
more();
</script>"""
    site.routes["/feed"] = Resource(
        200,
        HTML,
        _shell("Feed", script),
        shell=True,
        rendered_text=("Post 1 of the endless feed", "Post 5 of the endless feed"),
        subresources=(site.url("/api/feed?page=0"),),
    )


def _reach(site: Site, ctx: Context) -> None:
    port = ctx.port
    targets = [
        f"http://127.0.0.1:{port}/secret",
        f"http://127.0.0.2:{port}/secret",
        f"http://localhost:{port}/secret",
        f"http://[::1]:{port}/secret",
        "http://10.0.0.1/secret",
    ]
    script = (
        "<script>\n"
        + "".join(f"fetch({json.dumps(t)}).catch(function () {{}});\n" for t in targets)
        + "fetch('/api/submit', {method: 'POST', body: 'x=1'}).catch(function () {});\n"
        "try { navigator.sendBeacon('/api/beacon', 'x'); } catch (e) {}\n"
        f"try {{ new WebSocket('ws://js.test:{port}/ws'); }} catch (e) {{}}\n"
        f"try {{ window.open('http://js.test:{port}/popup'); }} catch (e) {{}}\n"
        "document.getElementById('root').innerHTML ="
        " '<h1>The reach test page is done</h1><p>Nothing left the browser.</p>';\n"
        f"setTimeout(function () {{ window.location = 'http://elsewhere.test:{port}/'; }}, 50);\n"
        "</script>"
    )
    site.routes["/reach"] = Resource(
        200,
        HTML,
        _shell("Reach", script),
        shell=True,
        rendered_text=("Nothing left the browser",),
    )
    for path in ("/secret", "/api/submit", "/api/beacon", "/ws", "/popup"):
        never = document("Never", f"<p>{path}: never asked for</p>")
        site.routes[path] = Resource(200, HTML, never)


def _forever(site: Site) -> None:
    script = (
        "<script>\n"
        "document.getElementById('root').innerHTML ="
        " '<h1>Forever</h1><p>This page never stops working: its script asks for more.</p>';\n"
        "setInterval(function () { fetch('/api/ping?t=' + Date.now()); }, 150);\n"
        "</script>"
    )
    site.routes["/forever"] = Resource(
        200,
        HTML,
        _shell("Forever", script),
        shell=True,
        rendered_text=("This page never stops working",),
    )


def _robots_api(site: Site) -> None:
    script = (
        "<script>\n"
        "fetch('/api/private/text').then(function (r) { return r.text(); })"
        ".then(function (t) { document.getElementById('root').innerHTML = '<p>' + t + '</p>'; })"
        ".catch(function () { document.getElementById('root').innerHTML ="
        " '<p>The private text could not be loaded.</p>'; });\n"
        "</script>"
    )
    site.routes["/robots-api"] = Resource(
        200,
        HTML,
        _shell("Private text", script),
        shell=True,
        rendered_text=("The private text could not be loaded.",),
        subresources=(site.url("/api/private/text"),),
    )
    site.routes["/api/private/text"] = Resource(200, "text/plain", PRIVATE_WORDS.encode())


def _busy(site: Site) -> None:
    script = (
        "<script>\n"
        "document.getElementById('root').innerHTML = '<h1>Busy</h1>';\n"
        "setTimeout(function () { while (true) {} }, 100);\n"
        "</script>"
    )
    body = _shell("Busy", script).replace(
        b"<noscript>",
        b"<p>These are the busy page's own words, sent by its server.</p>\n<noscript>",
    )
    site.routes["/busy"] = Resource(200, HTML, body, shell=True)
