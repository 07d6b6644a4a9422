"""voyageai 0.5.0: dialects.md §6.4, §7.3. Pointed with base_url=BASE + "/voyage/v1"."""
from _harness import (BASE, DELETED_KEY, DOCS, EXHAUSTED_KEY, KEY, RELEVANT, RERANK_QUERY, check, expect_error,
                      ranked, require)

CLIENT = "voyageai 0.5.0 Client"


def client(key):
    import voyageai
    return voyageai.Client(api_key=key, base_url=BASE + "/voyage/v1", max_retries=0)


@check("voyageai", "rerank", CLIENT, "a",
       "rerank(query, documents, model=rerank-2.5, top_k=2) → POST /voyage/v1/rerank: relevant document first, usage.total_tokens an int")
def _():
    res = client(KEY).rerank(RERANK_QUERY, DOCS, model="rerank-2.5", top_k=2)
    detail = ranked([(r.index, r.relevance_score) for r in res.results], expected_count=2)
    require(res.results[0].document == DOCS[RELEVANT], f"results[0].document is {res.results[0].document!r}")
    require(isinstance(res.total_tokens, int), f"total_tokens is {res.total_tokens!r}")
    return f"{detail}, total_tokens {res.total_tokens}"


@check("voyageai", "deleted-key", CLIENT, "c",
       "deleted key → voyageai.error.AuthenticationError whose text is the 401 detail naming the deletion")
def _():
    import voyageai.error
    return expect_error(lambda: client(DELETED_KEY).rerank(RERANK_QUERY, DOCS, model="rerank-2.5"),
                        voyageai.error.AuthenticationError, "deleted")


@check("voyageai", "exhausted", CLIENT, "c",
       "exhausted allowance → 429 voyageai.error.RateLimitError (§7.3)")
def _():
    import voyageai.error
    return expect_error(lambda: client(EXHAUSTED_KEY).rerank(RERANK_QUERY, DOCS, model="rerank-2.5"),
                        voyageai.error.RateLimitError, "allowance")


@check("voyageai", "unknown-model", CLIENT, "x",
       "model='no-such-model' → 400 voyageai.error.InvalidRequestError (§4.4)")
def _():
    import voyageai.error
    return expect_error(lambda: client(KEY).rerank(RERANK_QUERY, DOCS, model="no-such-model"),
                        voyageai.error.InvalidRequestError)
