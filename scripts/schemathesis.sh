#!/usr/bin/env bash
# Schemathesis 4.25 (an independent OpenAPI fuzzer, https://schemathesis.readthedocs.io) against the
# real built server: `npm run schemathesis`, or `bash scripts/schemathesis.sh` after `npm run build`.
# CI runs it as a stage of .ci/run; `npm test` does not need it (it is CI's, like the container image).
#
#   1. installs Schemathesis into a virtual environment from ../shared/tools/schemathesis/ (its wheels,
#      which the package index here lacks, and install.sh), once; later runs reuse it;
#   2. two passes, each against a fresh `node dist/src/server.js` on a free loopback port (PORT=0; the
#      URL is read from its log): `default` (no API keys), then `api-keys` (API_KEYS_FILE with one key
#      minted by scripts/apikey.ts, sent as Authorization: Bearer);
#   3. each pass runs every check (`--checks all`) on every operation of the served document, in every
#      phase (examples, coverage, fuzzing), with --max-examples per operation and one seed for both
#      passes, printed first; each pass is bounded by SCHEMATHESIS_TIME_LIMIT_S (a pass that runs
#      longer fails);
#   4. the verdict (scripts/schemathesis-verdict.ts) reads the pass's NDJSON report and fails on any
#      failed check or engine error, except `positive_data_acceptance` for the run-time rules listed
#      there, each by operation, status and problem type (and field), and only where the operation's
#      description in the served document states it; the server must still be up at the end of the
#      pass and must exit 0 on SIGTERM.
# The server is stopped by its PID in an EXIT trap, also when a check fails. Reports (NDJSON, JUnit,
# the server's log) go to test-artifacts/schemathesis/<pass>/; every failure there has a curl line.
#
# Environment: SCHEMATHESIS_SEED (default: a random seed, printed), SCHEMATHESIS_MAX_EXAMPLES (40),
# SCHEMATHESIS_TIME_LIMIT_S (900 per pass), SCHEMATHESIS_PASSES ("default api-keys"),
# SCHEMATHESIS_TOOLS (../shared/tools/schemathesis), SCHEMATHESIS_VENV (~/.cache/hashd/schemathesis-4.25.0).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "schemathesis: $*"; }
fail() { echo "schemathesis: FAIL: $*" >&2; exit 1; }

tools=${SCHEMATHESIS_TOOLS:-../shared/tools/schemathesis}
venv=${SCHEMATHESIS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/hashd/schemathesis-4.25.0}
venv=$(realpath -m "$venv")
seed=${SCHEMATHESIS_SEED:-$(((RANDOM << 15) | RANDOM))}
examples=${SCHEMATHESIS_MAX_EXAMPLES:-40}
time_limit=${SCHEMATHESIS_TIME_LIMIT_S:-900}
read -r -a passes <<<"${SCHEMATHESIS_PASSES:-default api-keys}"
reports=test-artifacts/schemathesis
config=$PWD/scripts/schemathesis.toml

[[ -f dist/src/server.js && -f dist/scripts/schemathesis-verdict.js ]] || fail "no build: run npm run build first (npm run schemathesis does)"
[[ -f "$tools/install.sh" ]] || fail "no $tools/install.sh (set SCHEMATHESIS_TOOLS to the folder with Schemathesis's wheels and install.sh)"
bash "$tools/install.sh" "$venv" >/dev/null
say "$("$venv/bin/st" --version), seed $seed, $examples examples per operation, at most $time_limit s per pass"

work=$(mktemp -d /tmp/hashd-schemathesis.XXXXXX)
server_pid=
stop_server() {
  [[ -n "$server_pid" ]] || return 0
  local pid=$server_pid status=0
  server_pid=
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    return 1
  fi
  wait "$pid" 2>/dev/null || status=$?
  return "$status"
}
cleanup() {
  stop_server || true
  rm -rf "$work"
}
trap cleanup EXIT

# Starts `node dist/src/server.js` with the pass's environment on a free loopback port; sets $url.
start_server() {
  local log=$1
  shift
  # Only what the pass sets: rate limits off, so thousands of requests are answered rather than 429
  # (the limits have their own tests); one calibration at a time is still enforced.
  env -i PATH="$PATH" HOME="$work" HOST=127.0.0.1 PORT=0 LOG_LEVEL=info RATE_LIMIT_MAX=0 CALIBRATE_RATE_LIMIT_MAX=0 "$@" \
    node dist/src/server.js >"$log" 2>&1 &
  server_pid=$!
  url=
  for _ in $(seq 300); do
    url=$(grep -o 'listening at http://127\.0\.0\.1:[0-9]*' "$log" | head -n 1 | sed 's/^listening at //') || true
    [[ -n "$url" ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || fail "the server exited at start: $(cat "$log")"
    sleep 0.1
  done
  fail "the server did not listen within 30 s: $(cat "$log")"
}

run_pass() {
  local pass=$1 dir="$PWD/$reports/$1" st_status=0 env_vars=() headers=()
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ "$pass" == api-keys ]]; then
    local minted
    minted=$(node dist/scripts/apikey.js schemathesis 2>/dev/null)
    # Scoped: every operation, but of the named HMAC keys only "0" (the shortest name the document
    # allows, which the coverage phase sends), so that keyName reaches a real key there and any
    # other name gets 403 insufficient-scope; "orders" exists outside the scope.
    echo "$(sed -n 2p <<<"$minted") hmac-keys=0" >"$work/api-keys"
    # Named HMAC keys (two versions of "0", allowing every HMAC algorithm the document lists, so a
    # generated algorithm is never refused by the key) and pepper keys, so that keyName, pepper and
    # rewrap are answered rather than refused for want of keys.
    local hmac_algorithms
    hmac_algorithms=$(node --input-type=module -e "const m = await import('$PWD/dist/src/routes/schemas.js'); console.log(m.canonicalNamesFor('hmac').join(','))")
    {
      echo "0 1 $(head -c 32 /dev/urandom | base64 -w0) algorithms=$hmac_algorithms"
      echo "0 2 $(head -c 32 /dev/urandom | base64 -w0)"
      echo "orders 1 $(head -c 32 /dev/urandom | base64 -w0)"
    } >"$work/hmac-keys"
    {
      echo "p1 $(head -c 32 /dev/urandom | base64 -w0) state=retired"
      echo "p2 $(head -c 32 /dev/urandom | base64 -w0)"
    } >"$work/pepper-keys"
    chmod 600 "$work/api-keys" "$work/hmac-keys" "$work/pepper-keys"
    env_vars+=(API_KEYS_FILE="$work/api-keys" HMAC_KEYS_FILE="$work/hmac-keys" PEPPER_KEYS_FILE="$work/pepper-keys")
    headers+=(--header "Authorization: Bearer $(sed -n 1p <<<"$minted")")
  fi
  start_server "$dir/server.log" "${env_vars[@]}"
  say "── pass $pass: $url (server pid $server_pid)"
  curl -fsS "$url/api/openapi.json" -o "$dir/openapi.json" || fail "GET /api/openapi.json failed"
  # The key is masked in the printed output (--output-sanitize); the report has it, and test-artifacts is gitignored.
  # From the scratch folder: Schemathesis keeps a cache (.schemathesis/) in its working directory.
  (cd "$work" && exec timeout --kill-after=10 "$time_limit" "$venv/bin/st" --config-file "$config" run "$url/api/openapi.json" --url "$url" \
    --checks all --phases examples,coverage,fuzzing --max-examples "$examples" --seed "$seed" \
    --generation-database none --request-timeout 60 --no-color \
    --report ndjson,junit --report-dir "$dir" --report-ndjson-path "$dir/report.ndjson" --report-junit-path "$dir/junit.xml" \
    "${headers[@]}") >"$dir/output.txt" 2>&1 || st_status=$?
  sed -n '/^=* SUMMARY =*$/,$p' "$dir/output.txt"
  ((st_status != 124 && st_status != 137)) || fail "pass $pass ran past $time_limit s (SCHEMATHESIS_TIME_LIMIT_S); see $dir/output.txt"
  kill -0 "$server_pid" 2>/dev/null || fail "the server died during pass $pass; see $dir/server.log"
  local verdict=0
  node dist/scripts/schemathesis-verdict.js "$dir/report.ndjson" "$dir/openapi.json" "$st_status" || verdict=$?
  stop_server || fail "the server did not exit 0 on SIGTERM after pass $pass; see $dir/server.log"
  ((verdict == 0)) || fail "pass $pass (seed $seed; the failures with their curl lines: $dir/output.txt)"
}

for pass in "${passes[@]}"; do run_pass "$pass"; done
say "passed: ${passes[*]} (seed $seed)"
