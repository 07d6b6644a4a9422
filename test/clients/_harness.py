"""Shared harness of the Python client conformance checks (../shared/spec/dialects.md §6).

Each family module (cohere_checks.py, tavily_checks.py, …) registers checks with @check; run_checks.py
lists or runs them. A check is a function that drives ONE real client, pointed at searchgate by its base
URL (or the one module constant §6 names) and a real searchgate key, and either returns a short detail
(what it saw) or raises: AssertionError for a wrong answer, any other exception for a client failure.

Environment (set by test/clients/python-clients.test.ts):
  BASE           http://127.0.0.1:<port> of the searchgate under test
  KEY            a live key of an account with a large allowance
  DELETED_KEY    a key of the same account, deleted before the run
  EXHAUSTED_KEY  a live key of an account whose daily allowance is 0
  PAGE_URL       a loopback page the content chain can fetch; PAGE_PHRASE is in its main text
  BAD_URL        a loopback URL that answers 404
  QUERY, DOMAIN  a query with results under DOMAIN; TEXT_PHRASE is in the text of one of them
"""
import json
import os
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Iterable
from urllib.parse import urlsplit

# dialects.md §6.8: no cost-map download at import; set before anything imports litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
for _var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
             "CO_API_URL", "CO_API_KEY", "COHERE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "VOYAGE_API_KEY",
             "JINA_API_KEY", "BRAVE_SEARCH_API_KEY", "BRAVE_API_KEY", "SERPER_API_KEY", "SEARX_HOST",
             "SEARXNG_API_KEY", "SEARXNG_API_BASE", "BING_SUBSCRIPTION_KEY", "BING_SEARCH_URL",
             "GOOGLE_API_KEY", "GOOGLE_CSE_ID", "GOOGLE_PSE_API_KEY", "GOOGLE_PSE_ENGINE_ID", "GOOGLE_PSE_API_BASE"):
    os.environ.pop(_var, None)

ENV = os.environ
BASE = ENV.get("BASE", "http://127.0.0.1:9")
KEY = ENV.get("KEY", "")
DELETED_KEY = ENV.get("DELETED_KEY", "")
EXHAUSTED_KEY = ENV.get("EXHAUSTED_KEY", "")
PAGE_URL = ENV.get("PAGE_URL", "")
PAGE_PHRASE = ENV.get("PAGE_PHRASE", "")
BAD_URL = ENV.get("BAD_URL", "")
QUERY = ENV.get("QUERY", "postgresql vacuuming")
DOMAIN = ENV.get("DOMAIN", "postgres.example")
TEXT_PHRASE = ENV.get("TEXT_PHRASE", "")

# The rerank fixture: the document at RELEVANT answers the query, the others do not.
RERANK_QUERY = "What is the capital of France?"
DOCS = ["Bananas are yellow and rich in potassium.",
        "Paris is the capital and largest city of France.",
        "Berlin is the capital of Germany."]
RELEVANT = 1

CHECK_TIMEOUT_S = float(ENV.get("CHECK_TIMEOUT_S", "30"))

# The version of each distribution per venv, for the labels (--list runs without importing clients).
VENVS = ("clients", "clients-cohere5")


@dataclass
class Check:
    id: str          # unique within a venv: "<family>/<slug>"
    venvs: tuple     # which venvs run it
    client: str      # "cohere 7.3.1 Client (v1)"
    check: str       # "a" results, "b" page text, "c" key/allowance errors, "x" bad input → vendor 4xx
    name: str        # what it shows, in words
    fn: Callable[[], object]


CHECKS: list = []


def check(family: str, slug: str, client: str, letter: str, name: str, venvs: Iterable[str] = ("clients",)):
    def register(fn):
        CHECKS.append(Check(f"{family}/{slug}", tuple(venvs), client, letter, name, fn))
        return fn
    return register


# ---------------------------------------------------------------------------------------------------
# Assertions that read like the spec.

class CheckFailed(AssertionError):
    pass


def require(condition, message):
    if not condition:
        raise CheckFailed(message)


def short(value, limit=400):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def host_in(url, domain):
    host = urlsplit(url).hostname or ""
    return host == domain or host.endswith("." + domain)


def ranked(pairs, expected_count=None, what="results"):
    """pairs: [(index, score)] in the order the client returned them. The relevant document first,
    scores in [0, 1], best first."""
    require(pairs, f"no {what}")
    if expected_count is not None:
        require(len(pairs) == expected_count, f"{len(pairs)} {what}, expected {expected_count}: {pairs}")
    require(pairs[0][0] == RELEVANT, f"document {pairs[0][0]} ranked first, expected {RELEVANT} ({DOCS[RELEVANT]!r}): {pairs}")
    for index, score in pairs:
        require(isinstance(score, (int, float)) and 0 <= score <= 1, f"score {score!r} of document {index} is not in [0, 1]: {pairs}")
    scores = [score for _, score in pairs]
    require(scores == sorted(scores, reverse=True), f"{what} are not best first: {pairs}")
    return f"order {[i for i, _ in pairs]}, scores {[round(s, 3) for s in scores]}"


def error_text(exc):
    """The class and what the client tells its user, without the noise some clients put first (cohere's
    str() starts with every response header; googleapiclient's with the request URI, key included)."""
    name = f"{type(exc).__module__}.{type(exc).__name__}"
    if type(exc).__module__.startswith("cohere.") and hasattr(exc, "body"):  # cohere ApiError and subclasses
        return f"{name}: status_code {exc.status_code}, body {short(exc.body, 500)}"
    if hasattr(exc, "error_details") and hasattr(exc, "reason") and hasattr(exc, "resp"):  # googleapiclient HttpError
        return f"{name}: status_code {exc.status_code}, reason {short(exc.reason, 300)!r}, error_details {short(exc.error_details, 300)}"
    return f"{name}: {short(str(exc), 600)}"


def expect_error(call, classes, *contains, predicate=None):
    """Runs call(); requires that it raises an instance of one of classes whose text contains every
    string of `contains` (case-insensitive) and for which predicate(exc) (if given) returns None or
    True; a string returned by predicate is a failure message. Returns the detail."""
    classes = classes if isinstance(classes, tuple) else (classes,)
    expected = " or ".join(f"{c.__module__}.{c.__name__}" for c in classes)
    try:
        result = call()
    except classes as exc:
        text = str(exc)
        for part in contains:
            require(part.lower() in text.lower(), f"raised {error_text(exc)} — its text lacks {part!r}")
        if predicate is not None:
            verdict = predicate(exc)
            if isinstance(verdict, str):
                raise CheckFailed(f"raised {error_text(exc)} — {verdict}")
        return f"raised {error_text(exc)}"
    except Exception as exc:  # noqa: BLE001 - the wrong class is the finding
        raise CheckFailed(f"expected {expected}, but it raised {error_text(exc)}") from exc
    raise CheckFailed(f"expected {expected}, but the call returned {short(result)}")


# ---------------------------------------------------------------------------------------------------
# Running.

LOOPBACK = ("127.0.0.1", "::1", "localhost")
OUTSIDE: list = []
_getaddrinfo, _connect = socket.getaddrinfo, socket.socket.connect


def _guard_getaddrinfo(host, *args, **kwargs):
    if host is not None and host not in LOOPBACK:
        OUTSIDE.append(f"dns:{host}")
        raise socket.gaierror(f"conformance checks: no network outside loopback ({host})")
    return _getaddrinfo(host, *args, **kwargs)


def _guard_connect(sock, address):
    if isinstance(address, tuple) and address[0] not in LOOPBACK:
        OUTSIDE.append(f"connect:{address[0]}")
        raise OSError(f"conformance checks: no network outside loopback ({address[0]})")
    return _connect(sock, address)


def guard_network():
    """From here on, any DNS lookup or connection outside loopback fails and is recorded in OUTSIDE."""
    socket.getaddrinfo, socket.socket.connect = _guard_getaddrinfo, _guard_connect


def checks_for(venv):
    return [c for c in CHECKS if venv in c.venvs]


def list_checks(venv, out):
    for c in checks_for(venv):
        out.write(json.dumps({"id": c.id, "client": c.client, "check": c.check, "name": c.name}) + "\n")
    out.flush()


def run_checks(venv, out, only=None):
    """Runs every check of the venv, each in a thread bounded by CHECK_TIMEOUT_S, and writes one JSON
    line per check to `out` as it finishes."""
    import warnings
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset
    warnings.simplefilter("ignore", ResourceWarning)
    guard_network()
    for c in checks_for(venv):
        if only and c.id not in only:
            continue
        line = {"id": c.id, "client": c.client, "check": c.check, "name": c.name, "ok": False}
        outcome = {}
        first_outside = len(OUTSIDE)

        def target(c=c, outcome=outcome):
            try:
                outcome["detail"] = c.fn()
            except CheckFailed as exc:
                outcome["error"] = str(exc)
            except Exception as exc:  # noqa: BLE001 - every client failure is reported the same way
                frames = [f for f in traceback.extract_tb(exc.__traceback__)]
                where = f"{frames[-1].filename.rsplit('site-packages/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
                outcome["error"] = f"unexpected {error_text(exc)} (at {where})"

        started = time.monotonic()
        thread = threading.Thread(target=target, daemon=True, name=c.id)
        thread.start()
        thread.join(CHECK_TIMEOUT_S)
        line["s"] = round(time.monotonic() - started, 2)
        if thread.is_alive():
            line["detail"] = f"timed out after {CHECK_TIMEOUT_S:.0f} s (no answer from the client)"
        elif "error" in outcome:
            line["detail"] = outcome["error"]
        else:
            line["ok"] = True
            detail = outcome.get("detail")
            line["detail"] = detail if isinstance(detail, str) else short(detail)
        if OUTSIDE[first_outside:]:
            line["ok"] = False
            line["detail"] = f"tried to reach the network outside loopback: {sorted(set(OUTSIDE[first_outside:]))}; {line['detail']}"
        out.write(json.dumps(line) + "\n")
        out.flush()
