/* terret-flatpak-engines.c: what the host changes in the SDK's engine
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The flatpak-host backend is one TerretEngine in either mode, with the
 * app's host as its far side (terret-flatpak-host.c), reached with a
 * socket handed over, so descriptors reach the host launcher as they
 * reach a local one. These are its class's hooks: a session's channel
 * (the SDK's TerretTerminalChannel: the terminal is made in the app, bash
 * takes it on the host), the far side, the check and the words;
 * the engine is otherwise the SDK's own, a one-shot run's `bash -c`
 * included.
 */

#include <gio/gio.h>

#include "terret-flatpak-engines.h"

#define HOST(engine) (((TerretFlatpakExecutor *)(engine))->host)
#define PARENT_CLASS(engine) \
  TERRET_ENGINE_CLASS (g_type_class_peek (TERRET_TYPE_ENGINE))

static TerretShellChannel *
flatpak_create_channel (TerretEngine  *engine,
                        const char    *session_key,
                        GError       **error)
{
  return terret_terminal_channel_new ();
}

static TerretFarSide *
flatpak_get_far_side (TerretEngine  *engine,
                      GError       **error)
{
  return terret_flatpak_host_far_side (HOST (engine), error);
}

gboolean
terret_flatpak_engine_check_available (TerretEngine  *engine,
                                       GCancellable  *cancellable,
                                       GError       **error)
{
  return terret_flatpak_host_check (HOST (engine), cancellable, error);
}

/* A shell's pid is the host's, which names nothing (or another process)
 * in the app's own pid namespace: none is declared, none is given. */
static TerretCapabilities
flatpak_get_capabilities (TerretEngine *engine)
{
  TerretCapabilities caps = PARENT_CLASS (engine)->get_capabilities (engine);

  if (terret_engine_get_mode (engine) == TERRET_ENGINE_MODE_SESSION)
    return caps & ~TERRET_CAPABILITY_SESSION_PID;
  return caps;
}

static char *
flatpak_describe_containment (TerretEngine *engine)
{
  return terret_flatpak_host_describe (HOST (engine));
}

void
terret_flatpak_engine_class_init (TerretEngineClass *klass)
{
  klass->create_channel = flatpak_create_channel;
  klass->get_far_side = flatpak_get_far_side;
  klass->get_capabilities = flatpak_get_capabilities;
  klass->describe_containment = flatpak_describe_containment;
}
