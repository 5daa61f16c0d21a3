#!/usr/bin/env bash
# Makes @jazzer.js/fuzzer's native addon load on this machine. The npm package ships prebuilt
# addons; its Linux x64 one needs glibc 2.38 and GLIBCXX_3.4.32 (Debian 13, Ubuntu 24.04), so on
# Debian 12 it fails to load ("version `GLIBC_2.38' not found"). Where it loads, nothing is done.
# Elsewhere the addon is built here from the C++ sources of @jazzer.js/fuzzer 2.1.0 (the last
# release whose npm package carries them; its JS interface is 4.0.0's but for one function, which
# libfuzzer-compat.cpp adds), linked with libFuzzer from Debian's libclang-rt-16-dev instead of the
# patched libFuzzer its CMakeLists downloads from GitHub. Nothing but the npm registry's tarball is
# fetched. The result goes to node_modules/@jazzer.js/fuzzer/dist/prebuilds/, which the package's
# addon.js prefers to its own prebuilds/ (npm ci removes it; this script makes it again).
set -euo pipefail
cd "$(dirname "$0")/../.."

SOURCE_PACKAGE=@jazzer.js/fuzzer@2.1.0
SOURCE_INTEGRITY=sha512-WroUAGH1+AFoI+5kRGOjvh9+1GsYEmCinvEt9yF0E0pBTeadssCG6Y8adeYh6W0rum2LjPsjVfLEWMunRLt/Ew==
LIBFUZZER=${LIBFUZZER:-/usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a}
package=node_modules/@jazzer.js/fuzzer
target="$package/dist/prebuilds/fuzzer-$(node -p 'process.platform + "-" + process.arch').node"

if [[ ! -d $package ]]; then
  echo "fuzz: $package is missing: run npm ci first" >&2
  exit 1
fi
if [[ "${1:-}" != --force ]] && node -e "require('./$package')" 2>/dev/null; then
  exit 0
fi
if [[ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]]; then
  echo "fuzz: @jazzer.js/fuzzer's prebuilt addon does not load here, and building it is only set up for Linux x86_64" >&2
  exit 1
fi
if [[ ! -f $LIBFUZZER ]]; then
  echo "fuzz: $LIBFUZZER is missing: apt-get install libclang-rt-16-dev (scripts/install-test-tools.sh installs it)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$SOURCE_PACKAGE" >/dev/null)
tarball=$(echo "$work"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [[ $actual != "$SOURCE_INTEGRITY" ]]; then
  echo "fuzz: $SOURCE_PACKAGE does not have the integrity pinned here ($actual)" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work"
src=$work/package

echo "fuzz: building @jazzer.js/fuzzer's addon from $SOURCE_PACKAGE's sources with $(g++ --version | head -1) and $LIBFUZZER"
mkdir -p "$(dirname "$target")"
flags=(-fPIC -O2 -std=c++17 -w -DNAPI_VERSION=4 -DNAPI_CPP_EXCEPTIONS
  -I fuzz/native/include -I node_modules/node-addon-api -I node_modules/node-api-headers/include -I "$src")
objects=()
for source in "$src"/addon.cpp "$src"/fuzzing_sync.cpp "$src"/fuzzing_async.cpp "$src"/utils.cpp "$src"/shared/*.cpp fuzz/native/libfuzzer-compat.cpp; do
  object="$work/$(basename "$source" .cpp).o"
  g++ "${flags[@]}" -c "$source" -o "$object"
  # addon.cpp's module registration is made local: libfuzzer-compat.cpp registers the module.
  if [[ $(basename "$source") == addon.cpp ]]; then
    objcopy --localize-symbol=napi_register_module_v1 --localize-symbol=node_api_module_get_api_version_v1 "$object"
  fi
  objects+=("$object")
done
# The wraps: see libfuzzer-compat.cpp (3.). Node's N-API functions are resolved when Node loads the addon.
g++ -shared -pthread -o "$work/addon.node" "${objects[@]}" \
  -Wl,--whole-archive "$LIBFUZZER" -Wl,--no-whole-archive \
  -Wl,--wrap=_ZN6fuzzer12FuzzerDriverEPiPPPcPFiPKhmE -Wl,--wrap=exit
mv "$work/addon.node" "$target"
node -e "require('./$package')"
echo "fuzz: built $target"
