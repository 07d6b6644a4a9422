"""langchain-cohere 0.6.0 CohereRerank (venv "clients-cohere5", cohere 5.21.1): dialects.md §6.3.

Pointed with base_url=BASE + "/cohere"; it posts /cohere/v2/rerank with "max_tokens_per_doc": null (R5).
It builds its client without max_retries, so its error check uses a 401 (never retried).
"""
from _harness import BASE, DELETED_KEY, DOCS, KEY, RELEVANT, RERANK_QUERY, check, expect_error, ranked, require

CLIENT = "langchain-cohere 0.6.0 CohereRerank"


def reranker(key):
    from langchain_cohere import CohereRerank
    return CohereRerank(model="rerank-v3.5", cohere_api_key=key, base_url=BASE + "/cohere")


def documents():
    from langchain_core.documents import Document
    return [Document(page_content=text, metadata={"i": i}) for i, text in enumerate(DOCS)]


@check("langchain-cohere", "compress-documents", CLIENT, "a",
       "compress_documents(docs, query) → POST /cohere/v2/rerank: relevant document first with metadata relevance_score in [0,1]",
       venvs=("clients-cohere5",))
def _():
    out = reranker(KEY).compress_documents(documents(), RERANK_QUERY)
    require(out and out[0].page_content == DOCS[RELEVANT], f"first document is {out[0].page_content if out else None!r}")
    return ranked([(d.metadata["i"], d.metadata.get("relevance_score")) for d in out], expected_count=3)


@check("langchain-cohere", "deleted-key", CLIENT, "c",
       "deleted key → cohere.errors.UnauthorizedError (unwrapped) naming the deletion", venvs=("clients-cohere5",))
def _():
    import cohere

    def readable(exc):
        body = getattr(exc, "body", None)
        message = body.get("message") if isinstance(body, dict) else None
        return None if isinstance(message, str) and "deleted" in message else f"body {body!r} does not name the deletion"
    return expect_error(lambda: reranker(DELETED_KEY).compress_documents(documents(), RERANK_QUERY),
                        cohere.errors.UnauthorizedError, predicate=readable)
