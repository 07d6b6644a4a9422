"""litellm 1.110.2: dialects.md §6.8 (rerank: cohere, jina_ai, voyage; search: tavily, exa_ai, brave,
searxng, serper, google_pse). LITELLM_LOCAL_MODEL_COST_MAP=True is set by _harness before the import.
litellm reports a response it cannot validate as APIConnectionError."""
import os

from _harness import (BASE, DELETED_KEY, DOCS, DOMAIN, KEY, QUERY, RERANK_QUERY, check, expect_error, host_in, ranked,
                      require, short)

LL = "litellm 1.110.2"


def litellm():
    import litellm as module
    module.suppress_debug_info = True  # it prints banners to stdout otherwise
    return module


# --- rerank -----------------------------------------------------------------------------------------

RERANKERS = {
    # provider: (model, api_base, where it lands)
    "cohere": ("cohere/rerank-v3.5", BASE + "/cohere", "/cohere/v2/rerank"),
    "jina_ai": ("jina_ai/jina-reranker-v2-base-multilingual", BASE + "/jina", "root /v1/rerank (path of api_base replaced)"),
    "voyage": ("voyage/rerank-2.5", BASE + "/voyage", "/voyage/v1/rerank"),
}


def rerank(provider, key, **kw):
    model, api_base, _ = RERANKERS[provider]
    return litellm().rerank(model=model, query=RERANK_QUERY, documents=DOCS, top_n=2, api_base=api_base, api_key=key, **kw)


for provider, (model, api_base, lands) in RERANKERS.items():
    @check("litellm-rerank", provider, f"{LL} rerank {provider}", "a",
           f"rerank(model={model}, api_base={api_base.replace(BASE, 'BASE')}) → {lands}: relevant document first, scores in [0,1]")
    def _(provider=provider):
        res = rerank(provider, KEY)
        return ranked([(r["index"], r["relevance_score"]) for r in res.results], expected_count=2)

    @check("litellm-rerank", f"{provider}-deleted-key", f"{LL} rerank {provider}", "c",
           "deleted key → litellm.AuthenticationError whose message holds the body's text")
    def _(provider=provider):
        ll = litellm()
        return expect_error(lambda: rerank(provider, DELETED_KEY), ll.AuthenticationError, "deleted")


# --- search -----------------------------------------------------------------------------------------

SEARCHERS = {
    # provider: (api_base, uses the domain filter)
    "tavily": (BASE + "/tavily", True),
    "exa_ai": (BASE + "/exa", True),
    "brave": (BASE + "/brave/res/v1/web/search", True),  # domains become "(q) AND (site:a)" (R8)
    "searxng": (BASE + "/searxng", False),
    "serper": (BASE + "/serper", True),  # domains become "(q) (site:a)" (R8)
    "google_pse": (BASE + "/google/customsearch/v1", True),
}


def search(provider, key, **kw):
    api_base, with_domains = SEARCHERS[provider]
    args = dict(query=kw.pop("query", QUERY), search_provider=provider, max_results=3)
    if with_domains:
        args["search_domain_filter"] = [DOMAIN]
    if provider == "google_pse":
        # §6.8: the sync google_pse reads the key and cx only from the environment.
        os.environ.update(GOOGLE_PSE_API_KEY=key, GOOGLE_PSE_ENGINE_ID="any", GOOGLE_PSE_API_BASE=api_base)
        return litellm().search(**args, **kw)
    return litellm().search(**args, api_base=api_base, api_key=key, **kw)


def results_detail(res, with_domains):
    require(res.results, f"no results: {short(res)}")
    for r in res.results:
        require(isinstance(r.title, str) and isinstance(r.url, str) and isinstance(r.snippet, str), f"result {short(r)}")
        if with_domains:
            require(host_in(r.url, DOMAIN), f"result outside {DOMAIN}: {r.url}")
    return f"{len(res.results)} results: {[r.url for r in res.results]}"


DELETED = {
    # provider: (error class name, text the message must hold)
    "tavily": ("AuthenticationError", "deleted"),
    "exa_ai": ("AuthenticationError", "deleted"),
    "brave": ("BadRequestError", "SUBSCRIPTION_TOKEN_INVALID"),
    "searxng": ("AuthenticationError", "deleted"),
    "serper": ("PermissionDeniedError", "deleted"),
    "google_pse": ("BadRequestError", "API key not valid"),
}

for provider, (api_base, with_domains) in SEARCHERS.items():
    @check("litellm-search", provider, f"{LL} search {provider}", "a",
           f"search(search_provider={provider}, api_base={api_base.replace(BASE, 'BASE')}"
           + (", search_domain_filter=[DOMAIN]" if with_domains else "") + ") → results with title, url, snippet")
    def _(provider=provider, with_domains=with_domains):
        return results_detail(search(provider, KEY), with_domains)

    error_class, text = DELETED[provider]

    @check("litellm-search", f"{provider}-deleted-key", f"{LL} search {provider}", "c",
           f"deleted key → litellm.{error_class} containing {text!r}")
    def _(provider=provider, error_class=error_class, text=text):
        return expect_error(lambda: search(provider, DELETED_KEY), getattr(litellm(), error_class), text)


@check("litellm-search", "searxng-path-key", f"{LL} search searxng", "a",
       "search(search_provider=searxng, api_base=BASE/searxng/{KEY}) with no api_key → GET /searxng/{KEY}/search: results")
def _():
    res = litellm().search(query=QUERY, search_provider="searxng", max_results=3, api_base=f"{BASE}/searxng/{KEY}")
    return results_detail(res, False)


@check("litellm-rerank", "cohere-unknown-model", f"{LL} rerank cohere", "x",
       "model='cohere/no-such-model' → 400 litellm.BadRequestError")
def _():
    ll = litellm()
    return expect_error(lambda: ll.rerank(model="cohere/no-such-model", query=RERANK_QUERY, documents=DOCS,
                                          api_base=BASE + "/cohere", api_key=KEY), ll.BadRequestError, "no-such-model")


@check("litellm-search", "tavily-max-results-negative", f"{LL} search tavily", "x",
       "max_results=-1 → 400 litellm.BadRequestError")
def _():
    ll = litellm()
    return expect_error(lambda: ll.search(query=QUERY, search_provider="tavily", max_results=-1, api_base=BASE + "/tavily",
                                          api_key=KEY), ll.BadRequestError, "max_results")
