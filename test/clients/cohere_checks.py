"""cohere (Python) 7.3.1 (venv "clients") and 5.21.1 (venv "clients-cohere5"): dialects.md §6.1.

Pointed with base_url=BASE + "/cohere" (→ /cohere/v1/rerank, /cohere/v2/rerank) or the bare BASE
(→ root /v1/rerank, /v2/rerank). No retries: request_options={"max_retries": 0} on each call (5.21.1's
Client takes no max_retries argument; R12).
"""
import time

from _harness import (BASE, DELETED_KEY, DOCS, EXHAUSTED_KEY, KEY, RELEVANT, RERANK_QUERY, check, expect_error,
                      ranked, require)

NO_RETRY = {"max_retries": 0}
VERSIONS = {"clients": "7.3.1", "clients-cohere5": "5.21.1"}


def v1(key=KEY, base=BASE + "/cohere"):
    import cohere
    return cohere.Client(api_key=key, base_url=base)


def v2(key=KEY, base=BASE + "/cohere"):
    import cohere
    return cohere.ClientV2(api_key=key, base_url=base)


def rerank_v1(client, **kw):
    args = dict(model="rerank-english-v3.0", query=RERANK_QUERY, documents=DOCS, top_n=2, return_documents=True)
    return client.rerank(**{**args, **kw}, request_options=NO_RETRY)


def rerank_v2(client, **kw):
    # ClientV2.rerank has no return_documents argument (cohere/v2/client.py): the v2 answer has no document.
    args = dict(model="rerank-v3.5", query=RERANK_QUERY, documents=DOCS, top_n=2)
    return client.rerank(**{**args, **kw}, request_options=NO_RETRY)


def shows_results(res, with_documents=True, api_version="1"):
    detail = ranked([(r.index, r.relevance_score) for r in res.results], expected_count=2)
    meta = res.meta
    version = getattr(getattr(meta, "api_version", None), "version", None)
    units = getattr(getattr(meta, "billed_units", None), "search_units", None)
    require(version == api_version and units == 1,
            f"meta {meta!r}: expected api_version.version {api_version!r} and billed_units.search_units 1 (§4.1, R6)")
    document = getattr(res.results[0], "document", None)
    if with_documents:
        require(document is not None and document.text == DOCS[RELEVANT],
                f"results[0].document is {document!r}, expected the text of document {RELEVANT} (return_documents=True)")
    else:
        require(document is None, f"results[0].document is {document!r}, but return_documents was not sent (§4.2)")
    return detail


def names_deletion(exc):
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if getattr(exc, "status_code", None) != 401:
        return f"status_code {getattr(exc, 'status_code', None)}, expected 401"
    if not (isinstance(message, str) and "deleted" in message):
        return f'e.body["message"] is {message!r}, which does not name the deletion (body {body!r})'
    return None


for venv, version in VERSIONS.items():
    label = f"cohere {version}"
    fam = "cohere"

    @check(fam, "client-v1", f"{label} Client (v1)", "a",
           "Client(base_url=BASE/cohere).rerank → POST /cohere/v1/rerank: relevant document first, scores in [0,1], document.text",
           venvs=(venv,))
    def _():
        return shows_results(rerank_v1(v1()))

    @check(fam, "client-v2", f"{label} ClientV2 (v2)", "a",
           "ClientV2(base_url=BASE/cohere).rerank(model=rerank-v3.5) → POST /cohere/v2/rerank: relevant document first",
           venvs=(venv,))
    def _():
        return shows_results(rerank_v2(v2()), with_documents=False, api_version="2")

    @check(fam, "client-root-v1", f"{label} Client (v1)", "a",
           "Client(base_url=BASE).rerank → root POST /v1/rerank: relevant document first", venvs=(venv,))
    def _():
        return shows_results(rerank_v1(v1(base=BASE)))

    @check(fam, "client-root-v2", f"{label} ClientV2 (v2)", "a",
           "ClientV2(base_url=BASE).rerank → root POST /v2/rerank: relevant document first", venvs=(venv,))
    def _():
        return shows_results(rerank_v2(v2(base=BASE)), with_documents=False, api_version="2")

    @check(fam, "v1-deleted-key", f"{label} Client (v1)", "c",
           "deleted key → cohere.errors.UnauthorizedError, e.body['message'] names the deletion", venvs=(venv,))
    def _():
        import cohere
        return expect_error(lambda: rerank_v1(v1(DELETED_KEY)), cohere.errors.UnauthorizedError, predicate=names_deletion)

    @check(fam, "v2-deleted-key", f"{label} ClientV2 (v2)", "c",
           "deleted key → cohere.errors.UnauthorizedError, e.body['message'] names the deletion", venvs=(venv,))
    def _():
        import cohere
        return expect_error(lambda: rerank_v2(v2(DELETED_KEY)), cohere.errors.UnauthorizedError, predicate=names_deletion)

    @check(fam, "v1-exhausted", f"{label} Client (v1)", "c",
           "exhausted allowance, max_retries 0 → cohere.errors.TooManyRequestsError at once", venvs=(venv,))
    def _():
        import cohere
        started = time.monotonic()

        def at_once(exc):
            elapsed = time.monotonic() - started
            body = getattr(exc, "body", None)
            if elapsed > 10:
                return f"took {elapsed:.1f} s: retried?"
            if not (isinstance(body, dict) and "allowance" in str(body.get("message"))):
                return f"body {body!r} does not say the allowance is exhausted"
            return None
        return expect_error(lambda: rerank_v1(v1(EXHAUSTED_KEY)), cohere.errors.TooManyRequestsError, predicate=at_once)

    @check(fam, "v2-empty-documents", f"{label} ClientV2 (v2)", "x",
           "documents=[] → 400 cohere.errors.BadRequestError", venvs=(venv,))
    def _():
        import cohere
        return expect_error(lambda: rerank_v2(v2(), documents=[]), cohere.errors.BadRequestError)

    @check(fam, "v1-unknown-model", f"{label} Client (v1)", "x",
           "model='no-such-model' → 400 cohere.errors.BadRequestError (§4.4)", venvs=(venv,))
    def _():
        import cohere
        return expect_error(lambda: rerank_v1(v1(), model="no-such-model"), cohere.errors.BadRequestError)
