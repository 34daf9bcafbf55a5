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

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gio/gio.h>

#include "terret-container-channel.h"
#include "terret-container-engines.h"

/* What of an engine's own settings the far side depends on; @shell is
 * freed by the caller. */
static void
get_policy (gpointer                engine,
            TerretContainerPolicy  *policy,
            char                  **shell)
{
  g_object_get (engine,
                "network", &policy->network,
                "limit-memory", &policy->limit_memory,
                "limit-processes", &policy->limit_processes,
                "shell", shell,
                NULL);
  policy->shell = *shell;
}

/* Without the launcher a running container's network is its own too:
 * network=off is refused there as it is with the launcher. */
static gboolean
check_direct_network (gpointer   engine,
                      GError   **error)
{
  TerretNetwork network;

  g_object_get (engine, "network", &network, NULL);
  if (network != TERRET_NETWORK_OFF)
    return TRUE;
  g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "network=off cannot take the network away from a running container: "
                       "use image (a disposable container gets --network=none), or the "
                       "container's own networking");
  return FALSE;
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
  return terret_container_channel_new (TERRET_CONTAINER_SESSION (executor)->config);
}

static TerretFarSide *
terret_container_session_get_far_side (TerretSessionExecutor  *executor,
                                       GError                **error)
{
  TerretContainerSession *self = TERRET_CONTAINER_SESSION (executor);
  TerretContainerPolicy policy;
  g_autofree char *shell = NULL;

  get_policy (self, &policy, &shell);
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
  TerretContainerConfig *config = TERRET_CONTAINER_SESSION (executor)->config;
  g_auto(GStrv) envp = NULL;

  take_container_limits (config, launcher);
  if (!terret_container_config_is_direct (config))
    return TRUE;

  /* Plain bash through the engine's exec: the channel moves this
   * environment (the defaults and the env setting, not the host's) into
   * the engine's command line. */
  if (!terret_container_config_check_limits (config, launcher, error) ||
      !check_direct_network (executor, error) ||
      (envp = terret_session_executor_dup_environ (executor, FALSE, error)) == NULL)
    return FALSE;
  terret_launcher_set_environ (launcher, (const char * const *)envp);
  /* The engine's exec starts the shell: reaching the container, on top
   * of the handshake. */
  *handshake_timeout += terret_container_config_get_connect_timeout (config);
  return TRUE;
}

/* launcher=none: the container runs commands at all, once, when the
 * executor is made: later, in oneshot mode, an engine's failure to exec
 * cannot be told from the command's own status. */
static gboolean
check_runs (gpointer                engine,
            TerretContainerConfig  *config,
            GCancellable           *cancellable,
            GError                **error)
{
  g_autofree char *shell = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *err = NULL;
  g_auto(GStrv) argv = NULL;
  const char *words[] = { NULL, "-c", ":", NULL };

  g_object_get (engine, "shell", &shell, NULL);
  words[0] = shell;
  argv = terret_container_config_direct_argv (config, FALSE, NULL, NULL, words);
  process = g_subprocess_newv ((const char * const *)argv,
                               G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                               error);
  if (process == NULL || !g_subprocess_communicate_utf8 (process, NULL, cancellable, NULL, &err, error))
    return FALSE;
  if (g_subprocess_get_if_exited (process) && g_subprocess_get_exit_status (process) == 0)
    return TRUE;
  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
               "Could not reach container “%s” (%s): %s", argv[g_strv_length (argv) - 4],
               terret_container_config_get_engine_name (config),
               err != NULL && *g_strstrip (err) != '\0' ? err : "its exec failed without a word");
  return FALSE;
}

/* launcher=none refuses at once what it cannot hold. */
static gboolean
check_none (gpointer                engine,
            TerretContainerConfig  *config,
            GError                **error)
{
  static const char * const limits[] = {
    "limit-memory", "limit-processes", "limit-cpu", "limit-file-size", "limit-open-files",
  };

  if (!terret_container_config_is_direct (config))
    return TRUE;
  if (!check_direct_network (engine, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      guint64 value = 0;

      g_object_get (engine, limits[i], &value, NULL);
      if (value != 0)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "%s cannot hold without the launcher (launcher=none): unset it, or use "
                       "launcher=auto or required", limits[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
terret_container_session_check_available (TerretSessionExecutor  *executor,
                                          GCancellable           *cancellable,
                                          GError                **error)
{
  TerretContainerConfig *config = TERRET_CONTAINER_SESSION (executor)->config;

  return terret_container_config_check (config, error) && check_none (executor, config, error) &&
         (!terret_container_config_is_direct (config) ||
          check_runs (executor, config, cancellable, error));
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
  g_autofree char *shell = NULL;

  get_policy (self, &policy, &shell);
  return terret_container_config_far_side (self->config, &policy, error);
}

static gboolean
terret_container_command_check_available (TerretCommandExecutor  *executor,
                                          GCancellable           *cancellable,
                                          GError                **error)
{
  TerretContainerConfig *config = TERRET_CONTAINER_COMMAND (executor)->config;

  return terret_container_config_check (config, error) && check_none (executor, config, error) &&
         (!terret_container_config_is_direct (config) ||
          check_runs (executor, config, cancellable, error));
}

/* Past this, a command goes to bash on its standard input rather than as
 * one argument of the engine's client (an argument's own limit is
 * 128 KiB). */
#define LONG_COMMAND (64 * 1024)

/* `ENGINE exec -i [--env=...] [--workdir=...] CONTAINER SHELL -c COMMAND`:
 * the environment is the env setting's and the request's, never the
 * host's, which the engine's client keeps (its PATH, DOCKER_HOST). */
static gboolean
prepare_direct_run (TerretContainerCommand  *self,
                    TerretRequest           *request,
                    TerretLauncher          *launcher,
                    GPtrArray               *argv,
                    GError                 **error)
{
  const char *command = terret_request_get_command (request);
  gsize len = strlen (command);
  g_auto(GStrv) envp = NULL;
  g_auto(GStrv) host = NULL;
  g_auto(GStrv) full = NULL;
  g_autofree char *shell = NULL;
  const char *words[4] = { NULL, "-c", NULL, NULL };

  if (!terret_container_config_check_limits (self->config, launcher, error) ||
      !check_direct_network (self, error))
    return FALSE;
  envp = terret_command_executor_dup_environ (TERRET_COMMAND_EXECUTOR (self), request, FALSE, error);
  if (envp == NULL)
    return FALSE;

  g_object_get (self, "shell", &shell, NULL);
  words[0] = shell;
  words[2] = command;
  if (len > LONG_COMMAND)
    {
      /* A memfd on the exec's stdin: the engine streams it in, bash reads
       * it whole, and the command gets an empty stdin as it would have. */
      int fd = memfd_create ("terret-command", MFD_CLOEXEC);

      if (fd < 0 || write (fd, command, len) != (gssize)len || lseek (fd, 0, SEEK_SET) != 0)
        {
          if (fd >= 0)
            close (fd);
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                       "Could not hand the shell a command of %" G_GSIZE_FORMAT " bytes", len);
          return FALSE;
        }
      terret_launcher_take_fd (launcher, fd, 0);
      words[2] = "IFS= \\builtin read -r -d '' __terret_command; \\exec 0</dev/null; "
                 "\\builtin eval \"\\builtin unset __terret_command; $__terret_command\"";
    }

  full = terret_container_config_direct_argv (self->config, FALSE, (const char * const *)envp,
                                              terret_launcher_get_cwd (launcher), words);
  /* podman's exec leaves its conmon behind for a moment, to clean up
   * after it: the run waits for it rather than kill it and report it as
   * something the command left running. */
  if (terret_container_config_get_engine (self->config) == TERRET_CONTAINER_PODMAN)
    {
      g_ptr_array_add (argv, g_strdup (terret_far_side_get_launcher ()));
      g_ptr_array_add (argv, g_strdup ("--outlast"));
    }
  for (guint i = 0; full[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (full[i]));

  host = g_get_environ ();
  terret_launcher_set_environ (launcher, (const char * const *)host);
  terret_launcher_set_cwd (launcher, NULL);
  return TRUE;
}

static gboolean
terret_container_command_prepare_run (TerretCommandExecutor  *executor,
                                      TerretRequest          *request,
                                      TerretLauncher         *launcher,
                                      GPtrArray              *argv,
                                      GError                **error)
{
  TerretContainerCommand *self = TERRET_CONTAINER_COMMAND (executor);

  take_container_limits (self->config, launcher);
  if (terret_container_config_is_direct (self->config))
    return prepare_direct_run (self, request, launcher, argv, error);
  return terret_command_executor_append_shell_command (executor, request, launcher, argv, error);
}

/* Without the launcher an interrupt reaches the engine's client, which
 * does not pass it on to what it exec'd. */
static TerretCapabilities
terret_container_command_get_capabilities (TerretCommandExecutor *executor)
{
  TerretCapabilities caps =
    TERRET_COMMAND_EXECUTOR_CLASS (terret_container_command_parent_class)->get_capabilities (executor);

  if (terret_container_config_is_direct (TERRET_CONTAINER_COMMAND (executor)->config))
    caps &= ~TERRET_CAPABILITY_INTERRUPT;
  return caps;
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
  command_class->get_capabilities = terret_container_command_get_capabilities;
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
