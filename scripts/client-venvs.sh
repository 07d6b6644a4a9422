#!/usr/bin/env bash
# Builds the pinned Python virtualenvs that hold the real vendor client libraries (cohere, voyageai,
# tavily-python, exa-py, langchain-community, litellm, google-api-python-client, langchain-cohere)
# which the dialect tests drive against a running searchgate (../shared/spec/dialects.md §6).
#
# Two venvs, because langchain-cohere 0.6.0 pins cohere<6 and cannot share one with cohere 7.3.1:
#   clients          requirements/clients.txt          (from requirements/clients.in)
#   clients-cohere5  requirements/clients-cohere5.txt  (from requirements/clients-cohere5.in)
# and a third that is no client: moto's S3-compatible server, for the tests of an index on object
# storage (its moto_server beside its python):
#   s3-server        requirements/s3-server.txt        (from requirements/s3-server.in)
# Each lives in ${SEARCHGATE_CACHE_DIR:-$HOME/.cache/searchgate}/client-venvs/<name> and is installed
# from its lock file alone (--require-hashes --no-deps): nothing is resolved at install time.
#
# Idempotent: a venv whose .prepared stamp matches the sha256 of its lock file (and the Python it
# was built with) is left alone; any other is rebuilt from scratch, the stamp written last.
#
# Usage:
#   bash scripts/client-venvs.sh            create or refresh both, then print "<name>: <python>"
#   bash scripts/client-venvs.sh --print    only print the paths; exit 1 if a venv is not ready
#   bash scripts/client-venvs.sh --lock [pip-compile args, e.g. --upgrade]
#                                           regenerate the lock files from the .in files
# Smoke check (no network): <python> test/clients/smoke.py
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req_dir="$repo_dir/requirements"
cache_dir="${SEARCHGATE_CACHE_DIR:-$HOME/.cache/searchgate}"
root="$cache_dir/client-venvs"
python_bin="${PYTHON:-python3}"
names=(clients clients-cohere5 s3-server)
pip_tools="pip-tools==7.6.2"

mode=install
case "${1:-}" in
  "") ;;
  --print) mode=print ;;
  --lock) mode=lock; shift ;;
  -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--print | --lock [pip-compile args]]" >&2; exit 2 ;;
esac

# This machine's pip.conf adds a local extra index that lacks most projects; pip warns once per
# such project ("Location 'file:///…' is ignored"). Keep pip's other output, drop that noise.
quiet() {
  local log status=0
  log="$(mktemp)"
  "$@" >"$log" 2>&1 || status=$?
  grep -v "is ignored: it is neither a file nor a directory" "$log" >&2 || true
  rm -f "$log"
  return "$status"
}

python_version() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])'; }

stamp_for() {
  local name="$1"
  echo "$(sha256sum "$req_dir/$name.txt" | cut -d' ' -f1) python-$(python_version "$python_bin")"
}

ready() {
  local venv="$root/$1"
  [[ -f "$venv/.prepared" && "$(cat "$venv/.prepared")" == "$(stamp_for "$1")" ]] &&
    "$venv/bin/python" -c '' 2>/dev/null
}

print_paths() {
  local name
  for name in "${names[@]}"; do echo "$name: $root/$name/bin/python"; done
}

lock_header() {
  local why="the Python vendor clients of ../shared/spec/dialects.md §6 but langchain-cohere"
  [[ "$1" == clients-cohere5 ]] && why="langchain-cohere 0.6.0, which pins cohere>=5.18,<6
# (so cohere 5.21.1) and therefore cannot share the \"clients\" venv with cohere 7.3.1"
  [[ "$1" == s3-server ]] && why="moto's S3-compatible server, which the tests of an index on
# object storage start on 127.0.0.1"
  cat <<EOF
# Lock file of the "$1" client venv built by scripts/client-venvs.sh: $why.
# Every package, transitive ones included, pinned with the sha256 of each of its published files;
# installed with pip install --require-hashes --no-deps. Resolved for CPython 3.11 on Linux.
# Generated from requirements/$1.in by: bash scripts/client-venvs.sh --lock
# (pip-compile from $pip_tools; pass --upgrade after --lock to move every pin to the newest release).
EOF
}

if [[ "$mode" == lock ]]; then
  tools="$root/.pip-tools"
  mkdir -p "$root"
  if ! "$tools/bin/python" -m piptools --version 2>/dev/null | grep -q "${pip_tools#*==}"; then
    rm -rf "$tools"
    "$python_bin" -m venv "$tools"
    quiet "$tools/bin/python" -m pip install -q --disable-pip-version-check "$pip_tools"
  fi
  for name in "${names[@]}"; do
    echo "locking requirements/$name.txt"
    # --no-emit-index-url/--no-emit-find-links: the machine's local mirrors stay out of the file.
    # The hashes cover every published file of each version (all platforms), not only this one's.
    (cd "$req_dir" && CUSTOM_COMPILE_COMMAND="bash scripts/client-venvs.sh --lock" \
      quiet "$tools/bin/python" -m piptools compile -q --generate-hashes --allow-unsafe \
        --strip-extras --no-emit-index-url --no-emit-find-links --output-file="$name.txt" \
        "$@" "$name.in")
    # pip-compile rewrites the whole file with its own header; put ours above it.
    { lock_header "$name"; cat "$req_dir/$name.txt"; } >"$req_dir/$name.txt.tmp"
    mv "$req_dir/$name.txt.tmp" "$req_dir/$name.txt"
  done
  exit 0
fi

if [[ "$mode" == print ]]; then
  for name in "${names[@]}"; do
    ready "$name" || { echo "client venv $name is not ready: run bash scripts/client-venvs.sh" >&2; exit 1; }
  done
  print_paths
  exit 0
fi

version="$(python_version "$python_bin")"
if [[ "$version" != 3.11.* ]]; then
  echo "warning: the lock files were resolved for CPython 3.11; $python_bin is $version" >&2
fi

mkdir -p "$root"
# Two runs at once (a developer and a test) must not build the same venv together.
exec 9>"$root/.lock"
flock 9

for name in "${names[@]}"; do
  venv="$root/$name"
  if ready "$name"; then
    echo "client venv ready: $name"
    continue
  fi
  echo "creating client venv $name (requirements/$name.txt)"
  started=$SECONDS
  rm -rf "$venv"
  # No pip inside the venv (25 MB and 3 s less): the base Python's pip installs into it with
  # --python (pip >= 22.3); an older base pip gets one put in the venv instead.
  "$python_bin" -m venv --without-pip "$venv"
  pip=("$python_bin" -m pip --python "$venv/bin/python")
  if ! "${pip[@]}" --version >/dev/null 2>&1; then
    "$venv/bin/python" -m ensurepip -q
    pip=("$venv/bin/python" -m pip)
  fi
  # --no-deps: the lock file lists every package; --require-hashes: each file must match it.
  quiet "${pip[@]}" install -q --disable-pip-version-check --no-input --no-compile \
    --require-hashes --no-deps -r "$req_dir/$name.txt"
  # Byte-compile here, on every core, instead of pip's one-at-a-time --compile: where
  # PYTHONDONTWRITEBYTECODE=1 is set (it is in this project's sessions) nothing would be cached on
  # import, and importing litellm from source takes 4.5 s instead of 2.4 s in every test process. litellm's proxy server
  # (23 MB of .pyc) is never imported by the clients. A file that fails to compile is only slower.
  "$venv/bin/python" -m compileall -q -j 0 -x '/litellm/proxy/' \
    "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    >/dev/null 2>&1 || true
  # No client needs torch or CUDA (installing either would cost GBs): fail if one came in.
  if "$venv/bin/python" -c 'import importlib.metadata as m
print("\n".join(d.metadata["Name"] for d in m.distributions()))' |
    grep -iE '^(torch|nvidia-|triton|cuda-)' >&2; then
    echo "client venv $name pulled torch/CUDA packages (above): fix requirements/$name.in" >&2
    exit 1
  fi
  stamp_for "$name" >"$venv/.prepared"
  echo "client venv $name created in $((SECONDS - started)) s"
done

print_paths
