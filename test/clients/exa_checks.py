"""exa-py 2.28.0: dialects.md §5.2, §6.9, §7.5. Pointed with base_url=BASE + "/exa".

exa-py raises ValueError("Request failed with status code <n>: <body>") for every non-2xx."""
from _harness import (BAD_URL, BASE, DELETED_KEY, DOMAIN, EXHAUSTED_KEY, KEY, PAGE_PHRASE, PAGE_URL, QUERY, TEXT_PHRASE, check,
                      expect_error, host_in, require, short)

CLIENT = "exa-py 2.28.0 Exa"


def client(key):
    from exa_py import Exa
    return Exa(api_key=key, base_url=BASE + "/exa")


@check("exa", "search", CLIENT, "a",
       "search(query, num_results=3, include_domains=[DOMAIN]) → results in the domain with id, url, title")
def _():
    res = client(KEY).search(QUERY, num_results=3, include_domains=[DOMAIN])
    require(1 <= len(res.results) <= 3, f"{len(res.results)} results")
    for r in res.results:
        require(host_in(r.url or "", DOMAIN), f"result outside {DOMAIN}: {r.url}")
        require(r.id == r.url and isinstance(r.title, str), f"id/title: {r.id!r}, {r.title!r} (§5.2: id is the URL)")
    return f"{len(res.results)} results: {[r.url for r in res.results]}"


@check("exa", "search-text", CLIENT, "b",
       "search with the SDK's default contents.text → each result's text is page text (R7)")
def _():
    res = client(KEY).search(QUERY, num_results=3, include_domains=[DOMAIN])
    texts = [r.text for r in res.results]
    require(any(isinstance(t, str) and TEXT_PHRASE in t for t in texts),
            f"no result text contains {TEXT_PHRASE!r}: {[short(t, 120) for t in texts]}")
    return f"text lengths {[len(t) if isinstance(t, str) else t for t in texts]}"


@check("exa", "get-contents", CLIENT, "b",
       "get_contents([PAGE_URL, BAD_URL], text=True) → the page's text; statuses has an error entry for BAD_URL")
def _():
    res = client(KEY).get_contents([PAGE_URL, BAD_URL], text=True)
    page = next((r for r in res.results if r.url == PAGE_URL), None)
    require(page is not None, f"no result for {PAGE_URL}: {short(res)}")
    require(isinstance(page.text, str) and PAGE_PHRASE in page.text, f"text lacks {PAGE_PHRASE!r}: {short(page.text)}")
    statuses = res.statuses or []
    bad = next((s for s in statuses if s.id == BAD_URL), None)
    require(bad is not None and bad.status == "error" and bad.error is not None and bad.error.tag,
            f"statuses has no error entry with a tag for {BAD_URL}: {statuses!r}")
    good = next((s for s in statuses if s.id == PAGE_URL), None)
    require(good is not None and good.status == "success", f"statuses entry for {PAGE_URL}: {good!r}")
    return f"text {len(page.text)} chars; bad URL status {bad!r}"


@check("exa", "deleted-key", CLIENT, "c",
       "deleted key → ValueError whose text holds 401 and the body's error naming the deletion")
def _():
    return expect_error(lambda: client(DELETED_KEY).search(QUERY, num_results=1), ValueError,
                        "401", "Invalid API key", "deleted")


@check("exa", "num-results-101", CLIENT, "x",
       "search(num_results=101) (1..100) → ValueError with status 400")
def _():
    return expect_error(lambda: client(KEY).search(QUERY, num_results=101), ValueError, "status code 400")


@check("exa", "exhausted", CLIENT, "c",
       "exhausted allowance → ValueError with status 402 (NO_MORE_CREDITS, §7.5)")
def _():
    return expect_error(lambda: client(EXHAUSTED_KEY).search(QUERY, num_results=1), ValueError, "status code 402", "allowance")
