"""langchain-community 0.4.2: dialects.md §6.7 (Tavily, Brave, SearXNG, Bing, Serper, Google, JinaRerank).

Each is pointed exactly as §6.7 says: a base URL argument where the wrapper has one, else the one module
constant (Tavily, JinaRerank), the one-line `requests` patch (Serper), or a replaced search_engine (Google)."""
import json

from _harness import (BASE, DELETED_KEY, DOCS, KEY, QUERY, RELEVANT, RERANK_QUERY, TEXT_PHRASE, check,
                      expect_error, ranked, require, short)

LC = "langchain-community 0.4.2"


# --- Tavily -----------------------------------------------------------------------------------------

def tavily_module():
    import langchain_community.utilities.tavily_search as t
    t.TAVILY_API_URL = BASE + "/tavily"  # §6.7: module constant read at call time
    return t


def tavily_tool(key, **kw):
    tavily_module()
    from langchain_community.tools.tavily_search import TavilySearchResults
    return TavilySearchResults(tavily_api_key=key, **kw)


@check("langchain-tavily", "tool", f"{LC} TavilySearchResults", "a",
       "TavilySearchResults(max_results=3, include_raw_content=True).invoke({'query'}) → results with title, url, content, score (key in the body)")
def _():
    out = tavily_tool(KEY, max_results=3, include_raw_content=True).invoke({"query": QUERY})
    require(isinstance(out, list) and out, f"tool output: {short(out)}")
    for r in out:
        require(all(k in r for k in ("title", "url", "content", "score")), f"result lacks a field: {short(r)}")
    return f"{len(out)} results: {[r['url'] for r in out]}"


@check("langchain-tavily", "tool-raw-content", f"{LC} TavilySearchResults", "b",
       "the same tool call returns raw_content (page text) per result")
def _():
    out = tavily_tool(KEY, max_results=3, include_raw_content=True).invoke({"query": QUERY})
    require(isinstance(out, list) and out, f"tool output: {short(out)}")
    texts = [r.get("raw_content") for r in out]
    require(any(isinstance(t, str) and TEXT_PHRASE in t for t in texts),
            f"no raw_content contains {TEXT_PHRASE!r}: {[short(t, 100) for t in texts]}")
    return f"raw_content lengths {[len(t) if isinstance(t, str) else t for t in texts]}"


@check("langchain-tavily", "wrapper-deleted-key", f"{LC} TavilySearchAPIWrapper", "c",
       "deleted key → requests.HTTPError, status 401, body detail.error naming the deletion")
def _():
    import requests
    t = tavily_module()

    def verdict(exc):
        if exc.response is None or exc.response.status_code != 401:
            return f"status {getattr(exc.response, 'status_code', None)}, expected 401"
        try:
            error = exc.response.json()["detail"]["error"]
        except Exception:  # noqa: BLE001
            return f"body {exc.response.text[:300]!r} has no detail.error"
        return None if "deleted" in error else f"detail.error {error!r} does not name the deletion"
    return expect_error(lambda: t.TavilySearchAPIWrapper(tavily_api_key=DELETED_KEY).raw_results(QUERY),
                        requests.HTTPError, "401", predicate=verdict)


@check("langchain-tavily", "tool-deleted-key", f"{LC} TavilySearchResults", "c",
       "deleted key → the tool returns repr(HTTPError) containing 401")
def _():
    out = tavily_tool(DELETED_KEY).invoke({"query": QUERY})
    require(isinstance(out, str) and "401" in out and "HTTPError" in out, f"tool output: {short(out)}")
    return short(out, 200)


# --- Brave ------------------------------------------------------------------------------------------

def brave_tool(key, **search_kwargs):
    from langchain_community.tools import BraveSearch
    from langchain_community.utilities.brave_search import BraveSearchWrapper
    return BraveSearch(search_wrapper=BraveSearchWrapper(api_key=key, base_url=BASE + "/brave/res/v1/web/search",
                                                        search_kwargs={"count": 5, **search_kwargs}))


@check("langchain-brave", "tool", f"{LC} BraveSearch", "a",
       "BraveSearch(BraveSearchWrapper(base_url=…, search_kwargs={count: 5})).invoke(q) → JSON with title, link, snippet")
def _():
    out = json.loads(brave_tool(KEY).invoke(QUERY))
    require(isinstance(out, list) and 1 <= len(out) <= 5, f"tool output: {short(out)}")
    for r in out:
        require(isinstance(r.get("title"), str) and isinstance(r.get("link"), str) and isinstance(r.get("snippet"), str),
                f"result: {short(r)}")
    return f"{len(out)} results: {[r['link'] for r in out]}"


@check("langchain-brave", "deleted-key", f"{LC} BraveSearch", "c",
       "deleted key → Exception('HTTP error 422') (Brave's status for a bad token)")
def _():
    from langchain_community.utilities.brave_search import BraveSearchWrapper
    wrapper = BraveSearchWrapper(api_key=DELETED_KEY, base_url=BASE + "/brave/res/v1/web/search")

    def verdict(exc):
        return None if str(exc) == "HTTP error 422" else f"text {str(exc)!r}, expected 'HTTP error 422'"
    return expect_error(lambda: wrapper.run(QUERY), Exception, predicate=verdict)


@check("langchain-brave", "count-0", f"{LC} BraveSearch", "x",
       "search_kwargs={count: 0} (1..20) → Exception('HTTP error 422') (VALIDATION)")
def _():
    def verdict(exc):
        return None if str(exc) == "HTTP error 422" else f"text {str(exc)!r}, expected 'HTTP error 422'"
    return expect_error(lambda: brave_tool(KEY, count=0).search_wrapper.run(QUERY), Exception, predicate=verdict)


# --- SearXNG ----------------------------------------------------------------------------------------

def searx(host, headers=None):
    from langchain_community.utilities import SearxSearchWrapper
    return SearxSearchWrapper(searx_host=host, headers=headers)


def searx_results(wrapper):
    out = wrapper.results(QUERY, num_results=5)
    require(out and all("link" in r for r in out), f"results: {short(out)}")
    for r in out:
        require(isinstance(r.get("title"), str) and r.get("engines") == ["searchgate"] and r.get("category") == "general",
                f"result: {short(r)} (§5.4: engines ['searchgate'], category 'general')")
    text = wrapper.run(QUERY)
    require(isinstance(text, str) and text and "No good search result" not in text, f"run(): {short(text)}")
    return f"{len(out)} results: {[r['link'] for r in out]}; run() {len(text)} chars"


def searx_error(wrapper):
    def verdict(exc):
        body = exc.args[1] if len(exc.args) > 1 else ""
        try:
            error = json.loads(body).get("error")
        except Exception:  # noqa: BLE001
            return f"args {exc.args!r} hold no JSON body"
        return None if isinstance(error, str) and "deleted" in error else f"body error {error!r} does not name the deletion"
    return expect_error(lambda: wrapper.results(QUERY, num_results=5), ValueError, "Searx API returned an error",
                        predicate=verdict)


@check("langchain-searx", "header-key", f"{LC} SearxSearchWrapper", "a",
       "searx_host=BASE/searxng/search, headers={Authorization: Bearer KEY}: results() with url, title, engines, category; run() text")
def _():
    return searx_results(searx(BASE + "/searxng/search", {"Authorization": f"Bearer {KEY}"}))


@check("langchain-searx", "path-key", f"{LC} SearxSearchWrapper", "a",
       "searx_host=BASE/searxng/{KEY}/search (key in the path): results() and run()")
def _():
    return searx_results(searx(f"{BASE}/searxng/{KEY}/search"))


@check("langchain-searx", "header-deleted-key", f"{LC} SearxSearchWrapper", "c",
       "deleted key in the header → ValueError whose args hold the 401 body {'error': …}")
def _():
    return searx_error(searx(BASE + "/searxng/search", {"Authorization": f"Bearer {DELETED_KEY}"}))


@check("langchain-searx", "path-deleted-key", f"{LC} SearxSearchWrapper", "c",
       "deleted key in the path → ValueError whose args hold the 401 body {'error': …}")
def _():
    return searx_error(searx(f"{BASE}/searxng/{DELETED_KEY}/search"))


@check("langchain-searx", "pageno-0", f"{LC} SearxSearchWrapper", "x",
       "results(q, pageno=0) (pageno ≥ 1) → ValueError whose args hold the 400 body {'error': …}")
def _():
    def verdict(exc):
        body = exc.args[1] if len(exc.args) > 1 else ""
        try:
            error = json.loads(body).get("error")
        except Exception:  # noqa: BLE001
            return f"args {exc.args!r} hold no JSON body"
        return None if isinstance(error, str) and error else f"body {body!r} has no error text"
    wrapper = searx(BASE + "/searxng/search", {"Authorization": f"Bearer {KEY}"})
    return expect_error(lambda: wrapper.results(QUERY, num_results=5, pageno=0), ValueError,
                        "Searx API returned an error", predicate=verdict)


# --- Bing -------------------------------------------------------------------------------------------

def bing(key):
    from langchain_community.utilities import BingSearchAPIWrapper
    return BingSearchAPIWrapper(bing_subscription_key=key, bing_search_url=BASE + "/bing/v7.0/search")


@check("langchain-bing", "results", f"{LC} BingSearchAPIWrapper", "a",
       "results(q, 5) → snippet, title, link; run() text")
def _():
    w = bing(KEY)
    out = w.results(QUERY, 5)
    require(out and all("link" in r and "title" in r and "snippet" in r for r in out), f"results: {short(out)}")
    text = w.run(QUERY)
    require(isinstance(text, str) and text and "No good Bing" not in text, f"run(): {short(text)}")
    return f"{len(out)} results: {[r['link'] for r in out]}"


@check("langchain-bing", "deleted-key", f"{LC} BingSearchAPIWrapper", "c",
       "deleted key → requests.HTTPError 401 whose text carries the readable reason phrase (R11)")
def _():
    import requests

    def verdict(exc):
        response = exc.response
        if response is None or response.status_code != 401:
            return f"status {getattr(response, 'status_code', None)}, expected 401"
        reason = response.reason or ""
        if reason.strip() in ("", "Unauthorized"):
            return f"reason phrase {reason!r} says no more than the status (R11 wants '401 Unauthorized - <message>')"
        if reason not in str(exc):
            return f"reason phrase {reason!r} not in the error text"
        try:  # §7.8: APIM shape for auth errors
            error = response.json()["error"]
        except Exception:  # noqa: BLE001
            return f"body {response.text[:300]!r} is not the APIM shape {{'error': {{'code', 'message'}}}}"
        if error.get("code") != "401" or not str(error.get("message", "")).startswith("Access denied due to invalid subscription key"):
            return f"body error {error!r}: §7.8 wants code '401' and 'Access denied due to invalid subscription key…'"
        return None if "deleted" in error["message"] else f"body message {error['message']!r} does not name the deletion"
    return expect_error(lambda: bing(DELETED_KEY).results(QUERY, 5), requests.HTTPError, "401 Client Error",
                        predicate=verdict)


@check("langchain-bing", "count-0", f"{LC} BingSearchAPIWrapper", "x",
       "results(q, 0) (count ≥ 1) → requests.HTTPError 400")
def _():
    import requests

    def verdict(exc):
        status = getattr(exc.response, "status_code", None)
        return None if status == 400 else f"status {status}, expected 400"
    return expect_error(lambda: bing(KEY).results(QUERY, 0), requests.HTTPError, predicate=verdict)


# --- Serper -----------------------------------------------------------------------------------------

def serper(key, **kw):
    import types

    import requests

    import langchain_community.utilities.google_serper as gs
    # §6.7: the one-line patch; the URL is built inline in the module.
    gs.requests = types.SimpleNamespace(post=lambda url, **kwargs: requests.post(
        url.replace("https://google.serper.dev", BASE + "/serper"), **kwargs))
    return gs.GoogleSerperAPIWrapper(serper_api_key=key, **kw)


@check("langchain-serper", "results", f"{LC} GoogleSerperAPIWrapper", "a",
       "results(q)['organic'] with title, link (POST /serper/search with an empty body); run() text")
def _():
    w = serper(KEY)
    organic = w.results(QUERY).get("organic")
    require(isinstance(organic, list) and organic, f"organic: {short(organic)}")
    require(all(isinstance(r.get("link"), str) and isinstance(r.get("title"), str) for r in organic), f"organic: {short(organic)}")
    text = w.run(QUERY)
    require(isinstance(text, str) and text and "No good Google Search Result" not in text, f"run(): {short(text)}")
    return f"{len(organic)} results: {[r['link'] for r in organic]}"


@check("langchain-serper", "deleted-key", f"{LC} GoogleSerperAPIWrapper", "c",
       "deleted key → requests.HTTPError 403 (Serper's status)")
def _():
    import requests

    def verdict(exc):
        status = getattr(exc.response, "status_code", None)
        if status != 403:
            return f"status {status}, expected 403"
        body = exc.response.json()
        message = body.get("message", "")
        if not message.startswith("Unauthorized.") or body.get("statusCode") != 403:
            return f"body {body!r}: §7.9 wants {{'message': 'Unauthorized. (searchgate: …)', 'statusCode': 403}}"
        return None if "deleted" in message else f"body message {message!r} does not name the deletion"
    return expect_error(lambda: serper(DELETED_KEY).results(QUERY), requests.HTTPError, "403", predicate=verdict)


@check("langchain-serper", "num-0", f"{LC} GoogleSerperAPIWrapper", "x",
       "k=0 → num=0 (1..100) → requests.HTTPError 400")
def _():
    import requests

    def verdict(exc):
        status = getattr(exc.response, "status_code", None)
        return None if status == 400 else f"status {status}, expected 400"
    return expect_error(lambda: serper(KEY, k=0).results(QUERY), requests.HTTPError, predicate=verdict)


# --- Google (GoogleSearchAPIWrapper) ----------------------------------------------------------------

def google_wrapper(key, **kw):
    from googleapiclient.discovery import build
    from langchain_community.utilities.google_search import GoogleSearchAPIWrapper
    w = GoogleSearchAPIWrapper(google_api_key=key, google_cse_id="any", **kw)
    w.search_engine = build("customsearch", "v1", developerKey=key,
                            client_options={"api_endpoint": BASE + "/google"}, cache_discovery=False)
    return w


@check("langchain-google", "results", f"{LC} GoogleSearchAPIWrapper", "a",
       "results(q, 5) with search_engine replaced → title, link, snippet")
def _():
    out = google_wrapper(KEY).results(QUERY, 5)
    require(out and all("link" in r and "title" in r for r in out), f"results: {short(out)}")
    return f"{len(out)} results: {[r['link'] for r in out]}"


@check("langchain-google", "siterestrict", f"{LC} GoogleSearchAPIWrapper", "a",
       "siterestrict=True → GET /google/customsearch/v1/siterestrict: title, link")
def _():
    out = google_wrapper(KEY, siterestrict=True).results(QUERY, 5)
    require(out and all("link" in r and "title" in r for r in out), f"results: {short(out)}")
    return f"{len(out)} results: {[r['link'] for r in out]}"


@check("langchain-google", "deleted-key", f"{LC} GoogleSearchAPIWrapper", "c",
       "deleted key → googleapiclient HttpError 400, reason 'API key not valid…'")
def _():
    from googleapiclient.errors import HttpError

    def verdict(exc):
        if exc.status_code != 400:
            return f"status_code {exc.status_code}, expected 400"
        return None if str(exc.reason).startswith("API key not valid") else f"reason {exc.reason!r}"
    return expect_error(lambda: google_wrapper(DELETED_KEY).results(QUERY, 5), HttpError, predicate=verdict)


# --- JinaRerank -------------------------------------------------------------------------------------

def jina(key):
    import langchain_community.document_compressors.jina_rerank as j
    j.JINA_API_URL = BASE + "/jina/v1/rerank"  # §6.7: module constant read at call time
    return j.JinaRerank(jina_api_key=key)


def documents():
    from langchain_core.documents import Document
    return [Document(page_content=text, metadata={"i": i}) for i, text in enumerate(DOCS)]


@check("langchain-jina", "compress-documents", f"{LC} JinaRerank", "a",
       "compress_documents(docs, q) → POST /jina/v1/rerank: relevant document first, relevance_score in [0,1]")
def _():
    out = jina(KEY).compress_documents(documents(), RERANK_QUERY)
    require(out and out[0].page_content == DOCS[RELEVANT], f"first: {out[0].page_content if out else None!r}")
    return ranked([(d.metadata["i"], d.metadata["relevance_score"]) for d in out], expected_count=3)


@check("langchain-jina", "deleted-key", f"{LC} JinaRerank", "c",
       "deleted key → RuntimeError whose text is the 401 detail naming the deletion")
def _():
    return expect_error(lambda: jina(DELETED_KEY).compress_documents(documents(), RERANK_QUERY), RuntimeError, "deleted")
