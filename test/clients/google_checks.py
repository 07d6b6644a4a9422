"""google-api-python-client 2.202.0, build("customsearch", "v1"): dialects.md §5.7, §6.10, §7.10.

Pointed with client_options={"api_endpoint": BASE + "/google"}; the key travels as key=… in the query."""
import json

from _harness import BASE, DELETED_KEY, DOMAIN, EXHAUSTED_KEY, KEY, QUERY, check, expect_error, host_in, require

CLIENT = "google-api-python-client 2.202.0 cse().list"


def service(key):
    from googleapiclient.discovery import build
    return build("customsearch", "v1", developerKey=key, client_options={"api_endpoint": BASE + "/google"},
                 cache_discovery=False)


def http_status(status):
    def verdict(exc):
        return None if exc.status_code == status else f"status_code {exc.status_code}, expected {status}"
    return verdict


@check("google", "cse-list", CLIENT, "a",
       "cse().list(q, cx='any', num=5).execute() → items with title, link, snippet")
def _():
    res = service(KEY).cse().list(q=QUERY, cx="any", num=5).execute(num_retries=0)
    items = res.get("items") or []
    require(1 <= len(items) <= 5, f"{len(items)} items: {res!r}"[:400])
    for item in items:
        require(isinstance(item.get("title"), str) and isinstance(item.get("link"), str), f"item: {item!r}"[:300])
    request = (res.get("queries", {}).get("request") or [{}])[0]
    require("key" not in request and KEY not in json.dumps(res), f"the answer echoes the key (R3): {request!r}")
    require(request.get("startIndex") == 1 and request.get("searchTerms") == QUERY, f"queries.request[0] is {request!r}")
    total = res.get("searchInformation", {}).get("totalResults")
    require(isinstance(total, str) and total.isdigit(), f"searchInformation.totalResults is {total!r}, expected a string of digits")
    return f"{len(items)} items: {[i['link'] for i in items]}"


@check("google", "cse-list-site-search", CLIENT, "a",
       "cse().list(siteSearch=DOMAIN) → only items in the domain")
def _():
    res = service(KEY).cse().list(q=QUERY, cx="any", num=5, siteSearch=DOMAIN, siteSearchFilter="i").execute(num_retries=0)
    items = res.get("items") or []
    require(items, f"no items: {res!r}"[:400])
    require(all(host_in(i["link"], DOMAIN) for i in items), f"items outside {DOMAIN}: {[i['link'] for i in items]}")
    return f"{[i['link'] for i in items]}"


@check("google", "deleted-key", CLIENT, "c",
       "deleted key → HttpError 400, reason 'API key not valid…', error_details containing API_KEY_INVALID")
def _():
    from googleapiclient.errors import HttpError

    def verdict(exc):
        if exc.status_code != 400:
            return f"status_code {exc.status_code}, expected 400"
        if not str(exc.reason).startswith("API key not valid"):
            return f"reason {exc.reason!r} does not start 'API key not valid'"
        if "API_KEY_INVALID" not in repr(exc.error_details):
            return f"error_details {exc.error_details!r} lack API_KEY_INVALID"
        if DELETED_KEY[16:] and DELETED_KEY[16:] in exc.content.decode("utf-8", "replace"):
            return "the error body quotes the key (R3)"
        return None
    return expect_error(lambda: service(DELETED_KEY).cse().list(q=QUERY, cx="any").execute(num_retries=0), HttpError,
                        predicate=verdict)


@check("google", "num-11", CLIENT, "x",
       "cse().list(num=11) (1..10) → HttpError 400")
def _():
    from googleapiclient.errors import HttpError
    return expect_error(lambda: service(KEY).cse().list(q=QUERY, cx="any", num=11).execute(num_retries=0), HttpError,
                        predicate=http_status(400))


@check("google", "missing-cx", CLIENT, "x",
       "cse().list without cx → HttpError 400 (cx is required)")
def _():
    from googleapiclient.errors import HttpError
    return expect_error(lambda: service(KEY).cse().list(q=QUERY).execute(num_retries=0), HttpError,
                        predicate=http_status(400))


@check("google", "exhausted", CLIENT, "c",
       "exhausted allowance → HttpError 429 (RESOURCE_EXHAUSTED, §7.10)")
def _():
    from googleapiclient.errors import HttpError
    return expect_error(lambda: service(EXHAUSTED_KEY).cse().list(q=QUERY, cx="any").execute(num_retries=0), HttpError,
                        predicate=http_status(429))
