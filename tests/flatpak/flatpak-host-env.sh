# Sourced by the flatpak-host tests: a stand-in for a Flatpak app and its
# host, with the real session helper.
#
#   fh_setup BUILD_DIR PREFIX LIBDIR   the app's files, a bus, the helper
#   fh_sandbox COMMAND [ARG...]        COMMAND run as the app
#   fh_teardown                        (an EXIT trap)
#
# The app's files are the build installed into a directory of its own
# (meson install --destdir), which the sandbox mounts at PREFIX, as
# Flatpak mounts an app's at /app; /.flatpak-info in the sandbox names
# that directory as the app-path. The sandbox (bubblewrap) has its own
# pid namespace, the host's /usr and /etc, a /tmp of its own holding
# only the work directory, and the session bus: a dbus-daemon started
# here, on which flatpak-session-helper runs outside the sandbox, as it
# runs on a desktop. $FH_PROBE is a file on the host the sandbox does not
# have. Where something cannot run here, fh_setup prints a TAP skip in
# its words and exits 0.
#
# FH_BUS_POLICY=deny makes the bus refuse the app's calls to the helper
# (an app without --talk-name=org.freedesktop.Flatpak); FH_HELPER=no
# starts no helper. FH_INFO names another file to be the sandbox's
# /.flatpak-info.

fh_skip () {
  printf '1..0 # SKIP %s\n' "$*"
  exit 0
}

fh_teardown () {
  [ -n "${fh_helper_pid:-}" ] && kill "$fh_helper_pid" 2>/dev/null && wait "$fh_helper_pid" 2>/dev/null
  [ -n "${fh_bus_pid:-}" ] && kill "$fh_bus_pid" 2>/dev/null
  [ -n "${FH_WORK:-}" ] && rm -rf "$FH_WORK"
  [ -n "${fh_probe_dir:-}" ] && rm -rf "$fh_probe_dir"
  return 0
}

fh_setup () {
  local build=$1 prefix=$2 libdir=$3
  local helper=/usr/libexec/flatpak-session-helper

  command -v dbus-daemon >/dev/null || fh_skip "no dbus-daemon (install dbus-daemon)"
  [ -x "$helper" ] || fh_skip "no $helper (install flatpak)"
  command -v bwrap >/dev/null || fh_skip "no bwrap (install bubblewrap)"
  command -v gdbus >/dev/null || fh_skip "no gdbus (install libglib2.0-bin)"

  FH_WORK=$(mktemp -d "${TMPDIR:-/tmp}/terret-flatpak-XXXXXX")
  fh_probe_dir=$(mktemp -d "${TMPDIR:-/tmp}/terret-flatpak-probe-XXXXXX")
  trap fh_teardown EXIT
  FH_PROBE=$fh_probe_dir/probe
  echo "the host's own file" >"$FH_PROBE"
  FH_PREFIX=$prefix

  # The app's files: what runs (programs, libraries, modules, launchers),
  # all of it built for the tests; the headers and GIR are not needed,
  # and `meson test` does not build them.
  if ! meson install -C "$build" --destdir "$FH_WORK/app" --no-rebuild --quiet --tags runtime \
       >"$FH_WORK/install.log" 2>&1; then
    cat "$FH_WORK/install.log" >&2
    echo "Bail out! meson install --destdir failed"
    exit 1
  fi
  FH_APP=$FH_WORK/app$prefix
  [ -x "$FH_APP/libexec/terret-exec-1/terret-launcher-static" ] ||
    [ -n "$(find "$FH_APP" -name terret-launcher-static 2>/dev/null)" ] ||
    fh_skip "this build has no terret-launcher-static (install libc6-dev)"
  fh_libdir=$libdir
  printf '[Application]\nname=org.example.TerretTest\n\n[Instance]\napp-path=%s\n' "$FH_APP" \
    >"$FH_WORK/flatpak-info"

  # The bus. No systemd here: a dbus-daemon of the test's own, its
  # socket in the work directory, which the sandbox shares.
  mkdir -p "$FH_WORK/bus" "$FH_WORK/run" "$FH_WORK/tmp"
  chmod 700 "$FH_WORK/run"
  local deny=""
  [ "${FH_BUS_POLICY:-}" = deny ] &&
    deny='<deny send_destination="org.freedesktop.Flatpak"/>'
  cat >"$FH_WORK/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$FH_WORK/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    $deny
  </policy>
</busconfig>
CONF
  local said
  if ! said=$(dbus-daemon --config-file="$FH_WORK/bus.conf" --fork --print-address=1 \
                --print-pid=3 3>"$FH_WORK/bus.pid" 2>&1); then
    fh_skip "dbus-daemon cannot run here: $said"
  fi
  DBUS_SESSION_BUS_ADDRESS=$(printf '%s\n' "$said" | head -n 1)
  export DBUS_SESSION_BUS_ADDRESS
  fh_bus_pid=$(cat "$FH_WORK/bus.pid")

  if [ "${FH_HELPER:-yes}" != no ]; then
    XDG_RUNTIME_DIR=$FH_WORK/run "$helper" >"$FH_WORK/helper.log" 2>&1 &
    fh_helper_pid=$!
    if ! gdbus wait --session --timeout 60 org.freedesktop.Flatpak 2>>"$FH_WORK/helper.log"; then
      fh_skip "flatpak-session-helper cannot run here: $(tr '\n' ' ' <"$FH_WORK/helper.log")"
    fi
  fi

  # A sandbox, tried once: a chroot or a container without namespaces
  # refuses.
  if ! said=$(fh_sandbox true 2>&1); then
    fh_skip "bwrap cannot make a sandbox here: $said"
  fi
}

# The app: COMMAND in the sandbox, with an environment of its own (and
# the tests' sources, where a sanitizer's suppressions are).
fh_sandbox () {
  local -a pass=()
  local v

  for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS G_DEBUG MALLOC_CHECK_; do
    [ -n "${!v:-}" ] && pass+=(--setenv "$v" "${!v}")
  done
  bwrap --die-with-parent --unshare-pid --clearenv \
    --ro-bind /usr /usr --ro-bind /etc /etc \
    --symlink usr/bin /bin --symlink usr/sbin /sbin \
    --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
    --dev /dev --proc /proc --tmpfs /tmp \
    --bind "$FH_WORK" "$FH_WORK" \
    --bind "$FH_APP" "$FH_PREFIX" \
    --ro-bind "${FH_INFO:-$FH_WORK/flatpak-info}" /.flatpak-info \
    --ro-bind-try "${G_TEST_SRCDIR:-/nonexistent}" "${G_TEST_SRCDIR:-/nonexistent}" \
    --setenv PATH "$FH_PREFIX/bin:/usr/bin:/bin" \
    --setenv HOME "$HOME" \
    --setenv TMPDIR "$FH_WORK/tmp" \
    --setenv LD_LIBRARY_PATH "$fh_libdir" \
    --setenv DBUS_SESSION_BUS_ADDRESS "$DBUS_SESSION_BUS_ADDRESS" \
    "${pass[@]}" \
    --chdir / \
    "$@"
}
