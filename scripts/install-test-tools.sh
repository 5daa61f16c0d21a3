#!/usr/bin/env bash
# Installs, on Debian or Ubuntu, every program the test suite compares against or starts
# (test/helpers/tools.ts names the same packages). `npm test` runs the cross-checks whose tools it
# finds and skips the others with a reason; after this script it skips none. .ci/run uses it too.
set -euo pipefail
packages=(
  openssl coreutils curl rhash b3sum xxhash xz-utils whois apache2-utils argon2 hashid
  python3 python3-passlib python3-bcrypt python3-argon2 python3-pycryptodome python3-nacl libcrypt1
  openssh-client redis-server chromium prometheus minisign signify-openbsd gnupg jq grep procps sysvinit-utils util-linux
  shellcheck slowhttptest iproute2 systemd
  # the PKCS#11 tests, test/pkcs11*.test.ts: SoftHSM2, pkcs11-tool and pkcs11-spy, PyKCS11
  softhsm2 opensc opensc-pkcs11 python3-pykcs11
  # the content-hash cross-checks, test/content-hashes.test.ts
  git rclone python3-crcmod python3-libtorrent
  # the similarity cross-checks, test/similarity-*.test.ts
  ssdeep libfuzzy2
  # scripts/build-tiger-wasm.sh, whose output test/tiger-wasm.test.ts compares with the committed one
  clang-16 lld-16
  # npm run fuzz (fuzz/native/build-addon.sh): libFuzzer and a C++ compiler for Jazzer.js's addon
  libclang-rt-16-dev g++
)
missing=()
for name in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed' || missing+=("$name")
done
if ((${#missing[@]} == 0)); then echo "test tools: all installed"; exit 0; fi
sudo=()
if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
echo "test tools: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
