"""The typed records between the stages: the durable parse job and the parse outcome.

A ``ParseJob`` is everything the fetch stage knew about a stored page that the parse
stage needs, including decisions that were made per origin at fetch time (the
origin's tdmrep.json): it is what the parse queue holds, so a page parsed again
after a crash is judged exactly as it would have been the first time.

A ``ParseOutcome`` is what the parse stage decided, as a kind with its data. Its text
form (``str(outcome)``: ``"duplicate of https://..."``, ``"opted out: noai"``) is the
reason recorded on the URL; ``ParseOutcome.parse`` reads it back, in this one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from trawl.models import Location

__all__ = ["JobKind", "OutcomeKind", "ParseJob", "ParseOutcome", "TdmFileDecision"]

# What a stored response is to the parse role: an HTML page, or a sitemap file (whose
# URL and final URL are then the sitemap's frontier item and the file's address).
JobKind = Literal["page", "sitemap"]


@dataclass(frozen=True, slots=True)
class TdmFileDecision:
    """The origin's ``/.well-known/tdmrep.json`` verdict for the page's path."""

    reserved: bool
    policy: str | None = None


@dataclass(frozen=True, slots=True)
class ParseJob:
    """A fetched, stored page waiting for the parse stage."""

    host: str
    fp: int
    url: str  # the URL first asked for (the start of a redirect chain)
    final_url: str  # the URL that answered
    depth: int
    fetched_at: float
    status: int
    headers: tuple[tuple[str, str], ...]
    content_type: str | None
    warc: Location  # the response record
    truncated: str | None = None  # why the body is incomplete ("length", "decode", ...)
    previous_hash: str | None = None  # content hash of the last fetch of this URL
    revisit: float | None = None  # the revisit interval, for a page fetched before
    tdm_well_known: TdmFileDecision | None = None
    cash: float = 0.0  # the page's OPIC cash, passed on to its links in equal shares
    # The DOM rendered in headless Chromium (a WARC conversion record), parsed instead
    # of the response's body; and what the render policy decided and why ("rendered:
    # auto: empty mount point #root", "not rendered: 2,400 characters of text").
    rendered: Location | None = None
    render: str | None = None
    kind: JobKind = "page"

    def dump(self) -> bytes:
        return orjson.dumps(
            {
                "host": self.host,
                "fp": self.fp,
                "url": self.url,
                "final_url": self.final_url,
                "depth": self.depth,
                "fetched_at": self.fetched_at,
                "status": self.status,
                "headers": self.headers,
                "content_type": self.content_type,
                "warc": (self.warc.file, self.warc.offset, self.warc.length),
                "truncated": self.truncated,
                "previous_hash": self.previous_hash,
                "revisit": self.revisit,
                "tdm_well_known": (
                    None
                    if self.tdm_well_known is None
                    else (self.tdm_well_known.reserved, self.tdm_well_known.policy)
                ),
                "cash": self.cash,
                "rendered": (
                    None
                    if self.rendered is None
                    else (self.rendered.file, self.rendered.offset, self.rendered.length)
                ),
                "render": self.render,
                "kind": self.kind,
            }
        )

    @classmethod
    def load(cls, data: bytes | str) -> ParseJob:
        """A job from ``dump`` (or from a queue written before jobs were typed)."""
        d: dict[str, Any] = orjson.loads(data)
        tdm = d.get("tdm_well_known")
        dom = d.get("rendered")
        return cls(
            host=str(d["host"]),
            fp=int(d["fp"]),
            url=str(d["url"]),
            final_url=str(d["final_url"]),
            depth=int(d["depth"]),
            fetched_at=float(d["fetched_at"]),
            status=int(d["status"]),
            headers=tuple((str(k), str(v)) for k, v in d["headers"]),
            content_type=d.get("content_type"),
            warc=Location(str(d["warc"][0]), int(d["warc"][1]), int(d["warc"][2])),
            truncated=d.get("truncated"),
            previous_hash=d.get("previous_hash"),
            revisit=None if d.get("revisit") is None else float(d["revisit"]),
            tdm_well_known=None if not tdm else TdmFileDecision(bool(tdm[0]), tdm[1]),
            cash=float(d.get("cash") or 0.0),
            rendered=None if not dom else Location(str(dom[0]), int(dom[1]), int(dom[2])),
            render=d.get("render"),
            kind="sitemap" if d.get("kind") == "sitemap" else "page",
        )


class OutcomeKind(enum.Enum):
    """What became of a parsed page. The value is the first words of its reason text."""

    STORED = "stored"
    UNCHANGED = "unchanged"  # the same text as this URL's last fetch
    DUPLICATE = "duplicate of"  # detail: the URL that holds the text
    NEAR_DUPLICATE = "near duplicate of"  # detail: the URL of the cluster's founder
    CANONICAL = "canonical"  # detail: the canonical URL, offered instead
    NOINDEX = "noindex"
    NO_TEXT = "no text"
    OPTED_OUT = "opted out:"  # detail: the opt-outs, comma-separated
    LOW_QUALITY = "low quality:"  # detail: the failed rules
    BINARY = "binary content"
    UNDECODABLE = "undecodable text"
    ERROR = "error"  # detail: what the parser said

    @property
    def counter(self) -> str:
        """The named counter of this kind (``parse:duplicate``, ``parse:near``, ...)."""
        return "parse:" + self.value.split(" ", 1)[0]


# Longest first, so "near duplicate of" is not read as something shorter.
_BY_PREFIX = sorted(OutcomeKind, key=lambda k: -len(k.value))


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    kind: OutcomeKind
    detail: str | None = None

    def __str__(self) -> str:
        return self.kind.value if self.detail is None else f"{self.kind.value} {self.detail}"

    @property
    def duplicate_of(self) -> str | None:
        """The URL whose copy this page repeats, for exact and near duplicates."""
        if self.kind in (OutcomeKind.DUPLICATE, OutcomeKind.NEAR_DUPLICATE):
            return self.detail
        return None

    @classmethod
    def parse(cls, text: str) -> ParseOutcome | None:
        """The outcome a recorded reason names (None: not a parse outcome)."""
        for kind in _BY_PREFIX:
            if text == kind.value:
                return cls(kind)
            if text.startswith(kind.value + " "):
                return cls(kind, text[len(kind.value) + 1 :])
        return None
