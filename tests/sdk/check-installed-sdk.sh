#!/bin/sh
# Proves the installed SDK is enough to write a backend: installs
# terret-exec into a throwaway prefix, builds tests/sdk (a backend) against
# that prefix with pkg-config alone, installs it into the SDK's backenddir,
# and runs the installed conformance kit against it.
#
#   tests/sdk/check-installed-sdk.sh [SOURCE_DIR]
set -eu

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)

# The example backend gives its shell a terminal with util-linux script(1).
if ! command -v script >/dev/null 2>&1; then
  echo "1..0 # SKIP script(1) is not installed"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/terret-sdk-XXXXXX")
trap 'status=$?; if [ $status -ne 0 ]; then cat "$work"/*.log >&2; fi; rm -rf "$work"' EXIT
prefix=$work/prefix

meson setup "$work/sdk-build" "$src" --prefix="$prefix" --libdir=lib \
  -Dtests=false -Dintrospection=disabled >"$work/setup.log"
meson install -C "$work/sdk-build" --quiet >"$work/install.log"

# Nothing of the source tree from here on: only the prefix.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib"
export PATH="$prefix/bin:$PATH"

backenddir=$(pkg-config --variable=backenddir terret-exec-1)
test "$backenddir" = "$prefix/lib/terret-exec-1/backends"

meson setup "$work/plugin-build" "$src/tests/sdk" --prefix="$prefix" >"$work/plugin-setup.log"
meson install -C "$work/plugin-build" --quiet >"$work/plugin-install.log"
test -f "$backenddir/libterret-script.so"

# The installed library finds the installed backends by itself.
unset TERRET_EXEC_MODULE_PATH
# Its channel is behind a client (script(1), with no prepare_run): the
# library neither names what a close stopped there nor looks at the
# terminal, as for ssh (docs/plugins.md), so those two checks do not apply.
terret-exec-conformance --backend script \
  -s /conformance/close/lists -s /conformance/interactive/input-waits
