/* terret-flatpak-engines.c: the engines a flatpak-host executor drives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * mode=pty drives a TerretSessionExecutor, mode=oneshot a
 * TerretCommandExecutor: the SDK's engines as they are, with the host as
 * their far side (terret-flatpak-host.c), reached with a socket handed
 * over, so descriptors reach the host launcher as they reach a local one.
 */

#include <gio/gio.h>

#include "terret-flatpak-channel.h"
#include "terret-flatpak-engines.h"

/* --- Sessions ----------------------------------------------------------- */

struct _TerretFlatpakSession
{
  TerretSessionExecutor parent_instance;

  TerretFlatpakHost *host;      /* (owned) */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakSession, terret_flatpak_session,
                                TERRET_TYPE_SESSION_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static TerretShellChannel *
terret_flatpak_session_create_channel (TerretSessionExecutor  *executor,
                                       const char             *session_key,
                                       GError                **error)
{
  return terret_flatpak_channel_new ();
}

static TerretFarSide *
terret_flatpak_session_get_far_side (TerretSessionExecutor  *executor,
                                     GError                **error)
{
  return terret_flatpak_host_far_side (TERRET_FLATPAK_SESSION (executor)->host, error);
}

static gboolean
terret_flatpak_session_check_available (TerretSessionExecutor  *executor,
                                        GCancellable           *cancellable,
                                        GError                **error)
{
  return terret_flatpak_host_check (TERRET_FLATPAK_SESSION (executor)->host, cancellable, error);
}

/* A shell's pid is the host's, which names nothing (or another process)
 * in the app's own pid namespace: none is declared, none is given. */
static TerretCapabilities
terret_flatpak_session_get_capabilities (TerretSessionExecutor *executor)
{
  TerretCapabilities caps =
    TERRET_SESSION_EXECUTOR_CLASS (terret_flatpak_session_parent_class)->get_capabilities (executor);

  return caps & ~TERRET_CAPABILITY_SESSION_PID;
}

static char *
terret_flatpak_session_describe_containment (TerretSessionExecutor *executor)
{
  return terret_flatpak_host_describe (TERRET_FLATPAK_SESSION (executor)->host);
}

static void
terret_flatpak_session_finalize (GObject *object)
{
  TerretFlatpakSession *self = TERRET_FLATPAK_SESSION (object);

  g_clear_pointer (&self->host, terret_flatpak_host_unref);

  G_OBJECT_CLASS (terret_flatpak_session_parent_class)->finalize (object);
}

static void
terret_flatpak_session_class_init (TerretFlatpakSessionClass *klass)
{
  TerretSessionExecutorClass *session_class = TERRET_SESSION_EXECUTOR_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = terret_flatpak_session_finalize;
  session_class->create_channel = terret_flatpak_session_create_channel;
  session_class->get_far_side = terret_flatpak_session_get_far_side;
  session_class->check_available = terret_flatpak_session_check_available;
  session_class->get_capabilities = terret_flatpak_session_get_capabilities;
  session_class->describe_containment = terret_flatpak_session_describe_containment;
}

static void
terret_flatpak_session_class_finalize (TerretFlatpakSessionClass *klass)
{
}

static void
terret_flatpak_session_init (TerretFlatpakSession *self)
{
}

/* --- One-shot commands -------------------------------------------------- */

struct _TerretFlatpakCommand
{
  TerretCommandExecutor parent_instance;

  TerretFlatpakHost *host;      /* (owned) */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakCommand, terret_flatpak_command,
                                TERRET_TYPE_COMMAND_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static TerretFarSide *
terret_flatpak_command_get_far_side (TerretCommandExecutor  *executor,
                                     GError                **error)
{
  return terret_flatpak_host_far_side (TERRET_FLATPAK_COMMAND (executor)->host, error);
}

static gboolean
terret_flatpak_command_check_available (TerretCommandExecutor  *executor,
                                        GCancellable           *cancellable,
                                        GError                **error)
{
  return terret_flatpak_host_check (TERRET_FLATPAK_COMMAND (executor)->host, cancellable, error);
}

static char *
terret_flatpak_command_describe_containment (TerretCommandExecutor *executor)
{
  return terret_flatpak_host_describe (TERRET_FLATPAK_COMMAND (executor)->host);
}

static void
terret_flatpak_command_finalize (GObject *object)
{
  TerretFlatpakCommand *self = TERRET_FLATPAK_COMMAND (object);

  g_clear_pointer (&self->host, terret_flatpak_host_unref);

  G_OBJECT_CLASS (terret_flatpak_command_parent_class)->finalize (object);
}

static void
terret_flatpak_command_class_init (TerretFlatpakCommandClass *klass)
{
  TerretCommandExecutorClass *command_class = TERRET_COMMAND_EXECUTOR_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = terret_flatpak_command_finalize;
  command_class->get_far_side = terret_flatpak_command_get_far_side;
  command_class->check_available = terret_flatpak_command_check_available;
  command_class->describe_containment = terret_flatpak_command_describe_containment;
}

static void
terret_flatpak_command_class_finalize (TerretFlatpakCommandClass *klass)
{
}

static void
terret_flatpak_command_init (TerretFlatpakCommand *self)
{
}

/* --- Both --------------------------------------------------------------- */

void
terret_flatpak_engines_register (GTypeModule *module)
{
  terret_flatpak_session_register_type (module);
  terret_flatpak_command_register_type (module);
}

TerretExecutor *
terret_flatpak_engine_new (TerretFlatpakHost *host,
                           gboolean           session)
{
  if (session)
    {
      TerretFlatpakSession *self = g_object_new (TERRET_TYPE_FLATPAK_SESSION, NULL);

      self->host = terret_flatpak_host_ref (host);
      return TERRET_EXECUTOR (self);
    }
  else
    {
      TerretFlatpakCommand *self = g_object_new (TERRET_TYPE_FLATPAK_COMMAND, NULL);

      self->host = terret_flatpak_host_ref (host);
      return TERRET_EXECUTOR (self);
    }
}
