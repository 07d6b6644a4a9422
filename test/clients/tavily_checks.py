"""tavily-python 0.8.5: dialects.md §5.1, §6.5, §7.4. Pointed with api_base_url=BASE + "/tavily"."""
from _harness import (BAD_URL, BASE, DELETED_KEY, DOMAIN, EXHAUSTED_KEY, KEY, PAGE_PHRASE, PAGE_URL, QUERY, TEXT_PHRASE,
                      check, expect_error, host_in, require, short)

CLIENT = "tavily-python 0.8.5 TavilyClient"


def client(key):
    from tavily import TavilyClient
    return TavilyClient(api_key=key, api_base_url=BASE + "/tavily")


@check("tavily", "search", CLIENT, "a",
       "search(query, max_results=3, include_domains=[DOMAIN], include_usage=True) → results in the domain with title, url, content, "
       "score in [0,1] best first, raw_content null; answer null, images [], usage.credits 1")
def _():
    res = client(KEY).search(QUERY, max_results=3, include_domains=[DOMAIN], include_usage=True)
    results = res.get("results")
    require(isinstance(results, list) and 1 <= len(results) <= 3, f"results: {short(results)}")
    for r in results:
        require(host_in(r.get("url", ""), DOMAIN), f"result outside {DOMAIN}: {r.get('url')}")
        require(isinstance(r.get("title"), str) and isinstance(r.get("content"), str), f"title/content not strings: {short(r)}")
        require(isinstance(r.get("score"), (int, float)) and 0 <= r["score"] <= 1, f"score is {r.get('score')!r}")
        require(r.get("raw_content") is None, f"raw_content {short(r.get('raw_content'), 80)!r} though not asked (§5.1: null)")
    scores = [r["score"] for r in results]
    require(scores == sorted(scores, reverse=True), f"scores not best first: {scores}")
    require(res.get("usage") == {"credits": 1}, f"usage is {res.get('usage')!r}, expected {{'credits': 1}} (R6)")
    require(isinstance(res.get("request_id"), str) and res["request_id"], f"request_id is {res.get('request_id')!r}")
    require(res.get("answer", "absent") is None, f"answer is {res.get('answer', 'absent')!r}, expected null (R6)")
    require(res.get("images") == [], f"images is {res.get('images')!r}, expected []")
    return f"{len(results)} results: {[r['url'] for r in results]}"


@check("tavily", "search-raw-content", CLIENT, "b",
       "search(include_raw_content=True) → raw_content holds the page text (R7)")
def _():
    res = client(KEY).search(QUERY, max_results=3, include_domains=[DOMAIN], include_raw_content=True)
    results = res.get("results") or []
    require(results, f"no results: {short(res)}")
    texts = [r.get("raw_content") for r in results]
    require(any(isinstance(t, str) and TEXT_PHRASE in t for t in texts),
            f"no raw_content contains {TEXT_PHRASE!r}: {[short(t, 120) for t in texts]}")
    return f"raw_content lengths {[len(t) if isinstance(t, str) else t for t in texts]}"


@check("tavily", "extract", CLIENT, "b",
       "extract(urls=[PAGE_URL, BAD_URL]) → results[0].raw_content is the page text; BAD_URL in failed_results with an error")
def _():
    res = client(KEY).extract(urls=[PAGE_URL, BAD_URL])
    results = res.get("results") or []
    page = next((r for r in results if r.get("url") == PAGE_URL), None)
    require(page is not None, f"no result for {PAGE_URL}: {short(res)}")
    require(isinstance(page.get("raw_content"), str) and PAGE_PHRASE in page["raw_content"],
            f"raw_content lacks {PAGE_PHRASE!r}: {short(page.get('raw_content'))}")
    failed = res.get("failed_results") or []
    bad = next((f for f in failed if f.get("url") == BAD_URL), None)
    require(bad is not None, f"{BAD_URL} not in failed_results: {short(failed)}")
    require(isinstance(bad.get("error"), str) and bad["error"], f"failed_results entry has no error text: {bad!r}")
    require(all(r.get("url") != BAD_URL for r in results), f"{BAD_URL} is also in results")
    require(page.get("images") == [], f"images is {page.get('images')!r}, expected [] (§5.1)")
    return f"raw_content {len(page['raw_content'])} chars; failed: {bad!r}"


@check("tavily", "deleted-key", CLIENT, "c",
       "deleted key → tavily.errors.InvalidAPIKeyError with detail.error naming the deletion")
def _():
    from tavily.errors import InvalidAPIKeyError
    return expect_error(lambda: client(DELETED_KEY).search(QUERY), InvalidAPIKeyError,
                        "Unauthorized: missing or invalid API key", "deleted")


@check("tavily", "exhausted", CLIENT, "c",
       "exhausted allowance → 432 tavily.errors.ForbiddenError (plan usage limit)")
def _():
    from tavily.errors import ForbiddenError
    return expect_error(lambda: client(EXHAUSTED_KEY).search(QUERY), ForbiddenError,
                        "This request exceeds your plan's set usage limit", "allowance")


@check("tavily", "max-results-negative", CLIENT, "x",
       "search(max_results=-1) (range 0..20) → 400 tavily.errors.BadRequestError")
def _():
    from tavily.errors import BadRequestError
    return expect_error(lambda: client(KEY).search(QUERY, max_results=-1), BadRequestError)


@check("tavily", "max-results-25", CLIENT, "x",
       "search(max_results=25) → 200, served as 20 (§5.1: above 20 is not an error)")
def _():
    res = client(KEY).search(QUERY, max_results=25)
    require(isinstance(res.get("results"), list) and len(res["results"]) <= 20, f"answer: {short(res)}")
    return f"{len(res['results'])} results"


@check("tavily", "extract-too-many-urls", CLIENT, "x",
       "extract with 21 URLs (1..20) → 400 tavily.errors.BadRequestError")
def _():
    from tavily.errors import BadRequestError
    return expect_error(lambda: client(KEY).extract(urls=[f"{PAGE_URL}?n={i}" for i in range(21)]), BadRequestError)
