/* terret-container-engines.c: the engine a container executor drives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A container backend serves both modes under one name: mode=session
 * drives a TerretSessionExecutor, mode=oneshot a TerretCommandExecutor.
 * These are the two, as the SDK's engines with the container as their
 * far side (TerretFarSide): every shell and command runs there under the
 * far launcher, and the engines are otherwise the SDK's own.
 */

#include <gio/gio.h>

#include "terret-container-channel.h"
#include "terret-container-engines.h"

/* What of an engine's own settings the far side depends on. */
static void
get_policy (gpointer               engine,
            TerretContainerPolicy *policy)
{
  g_object_get (engine,
                "network", &policy->network,
                "limit-memory", &policy->limit_memory,
                "limit-processes", &policy->limit_processes,
                NULL);
}

/* A disposable container holds limit-memory and limit-processes for all
 * it runs (the engine's --memory and --pids-limit); per-process rlimits
 * standing in for them there would only be weaker and in the way. */
static void
take_container_limits (TerretContainerConfig *config,
                       TerretLauncher        *launcher)
{
  if (!terret_container_config_is_disposable (config))
    return;
  terret_launcher_set_limit (launcher, TERRET_LIMIT_MEMORY, 0);
  terret_launcher_set_limit (launcher, TERRET_LIMIT_PROCESSES, 0);
}

/* --- Sessions ----------------------------------------------------------- */

struct _TerretContainerSession
{
  TerretSessionExecutor parent_instance;

  TerretContainerConfig *config; /* (owned) */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretContainerSession, terret_container_session,
                                TERRET_TYPE_SESSION_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static TerretShellChannel *
terret_container_session_create_channel (TerretSessionExecutor  *executor,
                                         const char             *session_key,
                                         GError                **error)
{
  return terret_container_channel_new ();
}

static TerretFarSide *
terret_container_session_get_far_side (TerretSessionExecutor  *executor,
                                       GError                **error)
{
  TerretContainerSession *self = TERRET_CONTAINER_SESSION (executor);
  TerretContainerPolicy policy;

  get_policy (self, &policy);
  return terret_container_config_far_side (self->config, &policy, error);
}

static gboolean
terret_container_session_prepare_spawn (TerretSessionExecutor  *executor,
                                        const char             *session_key,
                                        TerretShellChannel     *channel,
                                        TerretLauncher         *launcher,
                                        double                 *handshake_timeout,
                                        GError                **error)
{
  take_container_limits (TERRET_CONTAINER_SESSION (executor)->config, launcher);
  return TRUE;
}

static gboolean
terret_container_session_check_available (TerretSessionExecutor  *executor,
                                          GCancellable           *cancellable,
                                          GError                **error)
{
  return terret_container_config_check (TERRET_CONTAINER_SESSION (executor)->config, error);
}

/* The shell's pid is the container's, which means nothing here. */
static TerretCapabilities
terret_container_session_get_capabilities (TerretSessionExecutor *executor)
{
  TerretCapabilities caps =
    TERRET_SESSION_EXECUTOR_CLASS (terret_container_session_parent_class)->get_capabilities (executor);

  return caps & ~TERRET_CAPABILITY_SESSION_PID;
}

static char *
terret_container_session_describe_containment (TerretSessionExecutor *executor)
{
  return terret_container_config_describe (TERRET_CONTAINER_SESSION (executor)->config, TRUE);
}

static void
terret_container_session_finalize (GObject *object)
{
  TerretContainerSession *self = TERRET_CONTAINER_SESSION (object);

  g_clear_pointer (&self->config, terret_container_config_unref);

  G_OBJECT_CLASS (terret_container_session_parent_class)->finalize (object);
}

static void
terret_container_session_class_init (TerretContainerSessionClass *klass)
{
  TerretSessionExecutorClass *session_class = TERRET_SESSION_EXECUTOR_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = terret_container_session_finalize;
  session_class->create_channel = terret_container_session_create_channel;
  session_class->get_far_side = terret_container_session_get_far_side;
  session_class->prepare_spawn = terret_container_session_prepare_spawn;
  session_class->check_available = terret_container_session_check_available;
  session_class->get_capabilities = terret_container_session_get_capabilities;
  session_class->describe_containment = terret_container_session_describe_containment;
}

static void
terret_container_session_class_finalize (TerretContainerSessionClass *klass)
{
}

static void
terret_container_session_init (TerretContainerSession *self)
{
}

/* --- One-shot commands -------------------------------------------------- */

struct _TerretContainerCommand
{
  TerretCommandExecutor parent_instance;

  TerretContainerConfig *config; /* (owned) */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretContainerCommand, terret_container_command,
                                TERRET_TYPE_COMMAND_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static TerretFarSide *
terret_container_command_get_far_side (TerretCommandExecutor  *executor,
                                       GError                **error)
{
  TerretContainerCommand *self = TERRET_CONTAINER_COMMAND (executor);
  TerretContainerPolicy policy;

  get_policy (self, &policy);
  return terret_container_config_far_side (self->config, &policy, error);
}

static gboolean
terret_container_command_prepare_run (TerretCommandExecutor  *executor,
                                      TerretRequest          *request,
                                      TerretLauncher         *launcher,
                                      GPtrArray              *argv,
                                      GError                **error)
{
  take_container_limits (TERRET_CONTAINER_COMMAND (executor)->config, launcher);
  return terret_command_executor_append_shell_command (executor, request, launcher, argv, error);
}

static gboolean
terret_container_command_check_available (TerretCommandExecutor  *executor,
                                          GCancellable           *cancellable,
                                          GError                **error)
{
  return terret_container_config_check (TERRET_CONTAINER_COMMAND (executor)->config, error);
}

static char *
terret_container_command_describe_containment (TerretCommandExecutor *executor)
{
  return terret_container_config_describe (TERRET_CONTAINER_COMMAND (executor)->config, FALSE);
}

static void
terret_container_command_finalize (GObject *object)
{
  TerretContainerCommand *self = TERRET_CONTAINER_COMMAND (object);

  g_clear_pointer (&self->config, terret_container_config_unref);

  G_OBJECT_CLASS (terret_container_command_parent_class)->finalize (object);
}

static void
terret_container_command_class_init (TerretContainerCommandClass *klass)
{
  TerretCommandExecutorClass *command_class = TERRET_COMMAND_EXECUTOR_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = terret_container_command_finalize;
  command_class->get_far_side = terret_container_command_get_far_side;
  command_class->prepare_run = terret_container_command_prepare_run;
  command_class->check_available = terret_container_command_check_available;
  command_class->describe_containment = terret_container_command_describe_containment;
}

static void
terret_container_command_class_finalize (TerretContainerCommandClass *klass)
{
}

static void
terret_container_command_init (TerretContainerCommand *self)
{
}

/* --- Both --------------------------------------------------------------- */

void
terret_container_engines_register (GTypeModule *module)
{
  terret_container_session_register_type (module);
  terret_container_command_register_type (module);
}

TerretExecutor *
terret_container_engine_new (TerretContainerConfig *config,
                             gboolean               session)
{
  if (session)
    {
      TerretContainerSession *self = g_object_new (TERRET_TYPE_CONTAINER_SESSION, NULL);

      self->config = terret_container_config_ref (config);
      return TERRET_EXECUTOR (self);
    }
  else
    {
      TerretContainerCommand *self = g_object_new (TERRET_TYPE_CONTAINER_COMMAND, NULL);

      self->config = terret_container_config_ref (config);
      return TERRET_EXECUTOR (self);
    }
}
