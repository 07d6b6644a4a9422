"""Runs the Python client conformance checks of ../shared/spec/dialects.md §6 against a searchgate.

Usage (the environment is described in _harness.py; python-clients.test.ts sets it):
  <venv python> test/clients/run_checks.py --venv clients|clients-cohere5 --list
  <venv python> test/clients/run_checks.py --venv clients|clients-cohere5 [--only ID ...]

Prints one JSON line per check on stdout:
  {"id", "client", "check": "a"|"b"|"c"|"x", "name", "ok", "detail", "s"}
a = search/rerank returns results, b = page text, c = a deleted key (or an exhausted allowance) raises
the client's own error, x = a bad input comes back as the vendor's 4xx through the client. Everything
the clients print themselves (litellm writes banners to stdout) goes to stderr.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _harness  # noqa: E402  (sets the environment before any client is imported)

# Registration order is the order of the run.
import cohere_checks  # noqa: E402,F401
import langchain_cohere_checks  # noqa: E402,F401
import voyage_checks  # noqa: E402,F401
import tavily_checks  # noqa: E402,F401
import exa_checks  # noqa: E402,F401
import google_checks  # noqa: E402,F401
import langchain_checks  # noqa: E402,F401
import litellm_checks  # noqa: E402,F401


# Imported before the checks run, so that no check's time bound includes an import (litellm's takes
# 2–3 s alone, far more on a loaded machine). A module that fails to import fails its checks instead.
WARM = {
    "clients": ["cohere", "voyageai", "tavily", "exa_py", "googleapiclient.discovery", "requests",
                "langchain_core.documents", "langchain_community.utilities.tavily_search",
                "langchain_community.tools.tavily_search", "langchain_community.tools",
                "langchain_community.utilities.brave_search", "langchain_community.utilities.google_serper",
                "langchain_community.utilities.google_search", "langchain_community.utilities",
                "langchain_community.document_compressors.jina_rerank", "litellm"],
    "clients-cohere5": ["cohere", "langchain_core.documents", "langchain_cohere"],
}


def warm_up(venv):
    import importlib
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in WARM[venv]:
            try:
                importlib.import_module(module)
            except Exception as exc:  # noqa: BLE001 - the checks that need it will say so
                print(f"warm-up: cannot import {module}: {exc!r}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", required=True, choices=_harness.VENVS)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    # Our JSON lines go to the original stdout; everything else written to fd 1 goes to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if args.list:
        _harness.list_checks(args.venv, out)
    else:
        _harness.guard_network()
        warm_up(args.venv)
        if _harness.OUTSIDE:
            print(f"warm-up: imports tried to reach the network: {sorted(set(_harness.OUTSIDE))}", file=sys.stderr)
        _harness.run_checks(args.venv, out, set(args.only) if args.only else None)
    out.flush()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # Daemon threads of timed-out checks may still hold sockets: do not wait for them.
    os._exit(code)
