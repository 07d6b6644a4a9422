"""Offline smoke check of the vendor client venvs built by scripts/client-venvs.sh.

Run with either venv's python: <venv>/bin/python test/clients/smoke.py. Starts a loopback HTTP
server that records each request and answers in the shape ../shared/spec/dialects.md gives the
route, points every client of this venv at it (only base URL and key change) and prints one JSON
line per client: {"client", "version", "ok", "method", "path", "auth" (where the key arrived),
"headers_seen", "body", "error", ...}. A connection or DNS lookup to any non-loopback host (e.g. a
download at import) is blocked, listed under "outside" and fails the client. Exit 0 if all passed.
"""
import contextlib
import importlib.metadata
import json
import os
import socket
import sys
import threading
import time
import traceback
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # dialects.md §6.8: no cost-map download
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
for var in ("CO_API_URL", "CO_API_KEY", "COHERE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "VOYAGE_API_KEY"):
    os.environ.pop(var, None)

KEY = "sg-smoke-key-123"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
OUTSIDE = []  # non-loopback hosts any client tried to reach
_getaddrinfo, _connect = socket.getaddrinfo, socket.socket.connect


def _guard_getaddrinfo(host, *args, **kwargs):
    if host not in LOOPBACK and host is not None:
        OUTSIDE.append(f"dns:{host}")
        raise socket.gaierror(f"smoke.py: no network outside loopback ({host})")
    return _getaddrinfo(host, *args, **kwargs)


def _guard_connect(sock, address):
    if isinstance(address, tuple) and address[0] not in LOOPBACK:
        OUTSIDE.append(f"connect:{address[0]}")
        raise OSError(f"smoke.py: no network outside loopback ({address[0]})")
    return _connect(sock, address)


socket.getaddrinfo, socket.socket.connect = _guard_getaddrinfo, _guard_connect

HIT = {"title": "Routine Vacuuming", "url": "https://www.postgresql.org/docs/current/routine-vacuuming.html",
       "snippet": "PostgreSQL databases require periodic maintenance."}
RERANK_V1 = {"code": 200, "log_id": "log-1", "msg": None, "id": "log-1", "model": "service-reranker-v1",
             "results": [{"index": 1, "relevance_score": 0.93, "rerankScore": 0.93},
                         {"index": 0, "relevance_score": 0.12, "rerankScore": 0.12}],
             "meta": {"api_version": {"version": "1"}, "billed_units": {"search_units": 1}}}
# route → answer in the shape dialects.md §4/§5 gives searchgate's dialects (trimmed); the rerank
# answers keep the LangSearch envelope fields (code, log_id, rerankScore) that clients must ignore.
ANSWERS = {
    "/cohere/v1/rerank": RERANK_V1,
    "/cohere/v2/rerank": dict(RERANK_V1, meta={"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}),
    "/voyage/v1/rerank": {"object": "list", "model": "service-reranker-v1", "usage": {"total_tokens": 0},
                          "data": [{"index": 1, "relevance_score": 0.93}, {"index": 0, "relevance_score": 0.12}]},
    "/tavily/search": {"query": "postgres vacuum", "answer": None, "images": [], "follow_up_questions": None,
                       "results": [{"title": HIT["title"], "url": HIT["url"], "content": HIT["snippet"],
                                    "score": 1.0, "raw_content": None}],
                       "response_time": 0.01, "request_id": "log-1"},
    "/exa/search": {"requestId": "log-1", "results": [{"id": HIT["url"], "url": HIT["url"], "title": HIT["title"],
                                                       "publishedDate": None, "author": None, "text": HIT["snippet"]}]},
    "/google/customsearch/v1": {"kind": "customsearch#search", "context": {"title": "searchgate"},
                                "items": [{"kind": "customsearch#result", "title": HIT["title"], "link": HIT["url"],
                                           "snippet": HIT["snippet"], "displayLink": "www.postgresql.org"}]},
}
REQUESTS = []
BORING = {"host", "content-length", "connection", "accept-encoding", "accept", "content-type", "user-agent"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        url = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        REQUESTS.append({"method": self.command, "path": url.path, "query": parse_qs(url.query),
                         "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        answer = ANSWERS.get(url.path)
        status, data = (200, answer) if answer is not None else (404, {"detail": f"no route {url.path}"})
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def auth_of(req):  # where the key arrived
    h, body = req["headers"], req["body"] if isinstance(req["body"], dict) else {}
    found = ["Authorization: Bearer"] * (h.get("authorization") == f"Bearer {KEY}")
    found += [f"{name} header" for name in ("x-api-key", "x-goog-api-key") if h.get(name) == KEY]
    found += ["key query parameter"] * (req["query"].get("key") == [KEY])
    return found + ["api_key body field"] * (body.get("api_key") == KEY) or ["none"]


DOCS = ["Bananas are yellow.", "Paris is the capital of France."]
Q = "capital of France"


# No retries: cohere 7 also takes Client(max_retries=0), but 5.x has no such argument (TypeError);
# the per-call request_options={"max_retries": 0} works in both.
def cohere_v1(base):
    import cohere
    res = cohere.Client(api_key=KEY, base_url=base + "/cohere").rerank(
        model="rerank-english-v3.0", query=Q, documents=DOCS, top_n=2, request_options={"max_retries": 0})
    assert res.results[0].index == 1 and res.results[0].relevance_score == 0.93, res


def cohere_v2(base):
    import cohere
    res = cohere.ClientV2(api_key=KEY, base_url=base + "/cohere").rerank(
        model="rerank-v3.5", query=Q, documents=DOCS, top_n=2, request_options={"max_retries": 0})
    assert res.results[0].index == 1, res


def voyageai_rerank(base):
    import voyageai
    res = voyageai.Client(api_key=KEY, base_url=base + "/voyage/v1").rerank(Q, DOCS, model="rerank-2.5")
    assert res.results[0].document == DOCS[1] and res.total_tokens == 0, res


def tavily_search(base):
    from tavily import TavilyClient
    res = TavilyClient(api_key=KEY, api_base_url=base + "/tavily").search("postgres vacuum", max_results=2)
    assert res["results"][0]["url"] == HIT["url"], res


def exa_search(base):
    from exa_py import Exa
    res = Exa(api_key=KEY, base_url=base + "/exa").search("postgres vacuum", num_results=1)
    assert res.results[0].url == HIT["url"] and res.results[0].text == HIT["snippet"], res


def langchain_tavily(base):
    import langchain_community.utilities.tavily_search as t
    t.TAVILY_API_URL = base + "/tavily"  # dialects.md §6.7: module constant read at call time
    res = t.TavilySearchAPIWrapper(tavily_api_key=KEY).results("postgres vacuum", max_results=2)
    assert res[0]["url"] == HIT["url"], res


def litellm_rerank(base):
    import litellm
    res = litellm.rerank(model="cohere/rerank-v3.5", query=Q, documents=DOCS, top_n=2,
                         api_base=base + "/cohere", api_key=KEY)
    assert res.results[0]["index"] == 1, res


def litellm_search(base):
    import litellm
    res = litellm.search("postgres vacuum", search_provider="tavily", max_results=2,
                         api_base=base + "/tavily", api_key=KEY)
    assert res.results[0].url == HIT["url"] and res.results[0].title == HIT["title"], res


def google_cse(base):
    from googleapiclient.discovery import build
    service = build("customsearch", "v1", developerKey=KEY, client_options={"api_endpoint": base + "/google"})
    res = service.cse().list(q="postgres vacuum", cx="x", num=1).execute(num_retries=0)
    assert res["items"][0]["link"] == HIT["url"], res


def langchain_cohere_rerank(base):
    from langchain_cohere import CohereRerank
    from langchain_core.documents import Document
    rr = CohereRerank(model="rerank-v3.5", cohere_api_key=KEY, base_url=base + "/cohere")
    out = rr.compress_documents([Document(page_content=d) for d in DOCS], Q)
    assert out[0].page_content == DOCS[1] and out[0].metadata["relevance_score"] == 0.93, out


CASES = [  # client, distribution, module, call
    ("cohere.Client.rerank", "cohere", "cohere", cohere_v1),
    ("cohere.ClientV2.rerank", "cohere", "cohere", cohere_v2),
    ("voyageai.Client.rerank", "voyageai", "voyageai", voyageai_rerank),
    ("tavily.TavilyClient.search", "tavily-python", "tavily", tavily_search),
    ("exa_py.Exa.search", "exa-py", "exa_py", exa_search),
    ("langchain_community TavilySearchAPIWrapper", "langchain-community", "langchain_community", langchain_tavily),
    ("litellm.rerank cohere", "litellm", "litellm", litellm_rerank),
    ("litellm.search tavily", "litellm", "litellm", litellm_search),
    ("googleapiclient customsearch cse.list", "google-api-python-client", "googleapiclient", google_cse),
    ("langchain_cohere.CohereRerank", "langchain-cohere", "langchain_cohere", langchain_cohere_rerank),
]


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    failures = passed = 0
    for client, dist, module, call in CASES:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue  # not in this venv
        line = {"client": client, "version": version, "ok": False}
        first_req, first_out = len(REQUESTS), len(OUTSIDE)
        started = time.monotonic()
        # stdout carries only our JSON lines: litellm prints its error banners there.
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("always")
            warnings.simplefilter("ignore", ResourceWarning)  # sockets of earlier cases, collected late
            try:
                __import__(module)
                line["import_s"] = round(time.monotonic() - started, 2)
                call(base)
                line["ok"] = True
            except Exception as exc:  # noqa: BLE001 - report every failure the same way
                line["error"] = f"{type(exc).__name__}: {exc}"[:500]
                line["where"] = traceback.format_exc().strip().splitlines()[-3].strip()
        seen_warnings = {f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught}
        line["call_s"] = round(time.monotonic() - started - line.get("import_s", 0), 2)
        reqs = REQUESTS[first_req:]
        if reqs:
            req = reqs[0]
            line.update(method=req["method"], path=req["path"], auth=auth_of(req),
                        headers_seen=sorted(set(req["headers"]) - BORING),
                        user_agent=req["headers"].get("user-agent"), content_type=req["headers"].get("content-type"),
                        query={k: v[0] for k, v in req["query"].items() if k != "key"},
                        body={k: ("<key>" if v == KEY else v) for k, v in req["body"].items()}
                        if isinstance(req["body"], dict) else req["body"])
            if len(reqs) > 1:
                line["more_requests"] = [f"{r['method']} {r['path']}" for r in reqs[1:]]
        else:
            line.update(ok=False, path=None)
            line.setdefault("error", "no request reached the loopback server")
        if seen_warnings:
            line["warnings"] = sorted(seen_warnings)
        if OUTSIDE[first_out:]:  # offline use is the point: any outside attempt fails the client
            line.update(ok=False, outside=sorted(set(OUTSIDE[first_out:])))
        failures += not line["ok"]
        passed += line["ok"]
        print(json.dumps(line), flush=True)
    server.shutdown()
    print(json.dumps({"venv": sys.prefix, "passed": passed, "failed": failures}), flush=True)
    return 1 if failures or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
