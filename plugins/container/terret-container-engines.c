/* terret-container-engines.c: what a container changes in the SDK's engine
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A container backend is one TerretEngine in either mode, with the
 * container as its far side (TerretFarSide): every shell and command
 * runs there under the far launcher, or, without the launcher, through
 * the engine's exec. These are its class's hooks; the engine is
 * otherwise the SDK's own.
 */

#include <string.h>

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

/* `ENGINE exec -i [--env=...] [--workdir=...] CONTAINER SHELL -c COMMAND`:
 * the environment is the env setting's and the request's, never the
 * host's, which the engine's client keeps (its PATH, DOCKER_HOST). A long
 * command goes to bash on the exec's standard input (an argument of the
 * engine's client has its own limit), which the command then finds
 * empty, as it would have. */
static gboolean
prepare_direct_run (TerretEngine           *engine,
                    TerretContainerConfig  *config,
                    TerretRequest          *request,
                    TerretLauncher         *launcher,
                    GPtrArray              *argv,
                    GError                **error)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) envp = NULL;
  g_auto(GStrv) host = NULL;
  g_auto(GStrv) full = NULL;

  if (!terret_container_config_check_limits (config, launcher, error) ||
      !check_direct_network (engine, error))
    return FALSE;
  envp = terret_engine_dup_environ (engine, request, FALSE, error);
  if (envp == NULL ||
      !terret_engine_append_shell_command (engine, request, launcher, 0, words, error))
    return FALSE;
  g_ptr_array_add (words, NULL);

  full = terret_container_config_direct_argv (config, FALSE, (const char * const *)envp,
                                              terret_launcher_get_cwd (launcher),
                                              (const char * const *)words->pdata);
  /* podman's exec leaves its conmon behind for a moment, to clean up
   * after it: the run waits for it rather than kill it and report it as
   * something the command left running. */
  if (terret_container_config_get_engine (config) == TERRET_CONTAINER_PODMAN)
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

/* --- The hooks ------------------------------------------------------------ */

#define CONFIG(engine) (((TerretContainerExecutor *)(engine))->config)
#define PARENT_CLASS(engine) \
  TERRET_ENGINE_CLASS (g_type_class_peek (TERRET_TYPE_ENGINE))

static TerretShellChannel *
container_create_channel (TerretEngine  *engine,
                          const char    *session_key,
                          GError       **error)
{
  return terret_container_channel_new (CONFIG (engine));
}

static TerretFarSide *
container_get_far_side (TerretEngine  *engine,
                        GError       **error)
{
  TerretContainerPolicy policy;
  g_autofree char *shell = NULL;

  get_policy (engine, &policy, &shell);
  return terret_container_config_far_side (CONFIG (engine), &policy, error);
}

static gboolean
container_prepare_spawn (TerretEngine        *engine,
                         const char          *session_key,
                         TerretShellChannel  *channel,
                         TerretLauncher      *launcher,
                         double              *handshake_timeout,
                         GError             **error)
{
  TerretContainerConfig *config = CONFIG (engine);
  g_auto(GStrv) envp = NULL;

  take_container_limits (config, launcher);
  if (!terret_container_config_is_direct (config))
    return TRUE;

  /* Plain bash through the engine's exec: the channel moves this
   * environment (the defaults and the env setting, not the host's) into
   * the engine's command line. */
  if (!terret_container_config_check_limits (config, launcher, error) ||
      !check_direct_network (engine, error) ||
      (envp = terret_engine_dup_environ (engine, NULL, FALSE, error)) == NULL)
    return FALSE;
  terret_launcher_set_environ (launcher, (const char * const *)envp);
  /* The engine's exec starts the shell: reaching the container, on top
   * of the handshake. */
  *handshake_timeout += terret_container_config_get_connect_timeout (config);
  return TRUE;
}

static gboolean
container_prepare_run (TerretEngine    *engine,
                       TerretRequest   *request,
                       TerretLauncher  *launcher,
                       GPtrArray       *argv,
                       GError         **error)
{
  TerretContainerConfig *config = CONFIG (engine);

  take_container_limits (config, launcher);
  if (terret_container_config_is_direct (config))
    return prepare_direct_run (engine, config, request, launcher, argv, error);
  return terret_engine_append_shell_command (engine, request, launcher, 3, argv, error);
}

gboolean
terret_container_engine_check_available (TerretEngine  *engine,
                           GCancellable  *cancellable,
                           GError       **error)
{
  TerretContainerConfig *config = CONFIG (engine);

  return terret_container_config_check (config, error) && check_none (engine, config, error) &&
         (!terret_container_config_is_direct (config) ||
          check_runs (engine, config, cancellable, error));
}

/* A shell's pid is the container's, which means nothing here; without
 * the launcher an interrupt reaches the engine's client, which does not
 * pass it on to what it exec'd. */
static TerretCapabilities
container_get_capabilities (TerretEngine *engine)
{
  TerretCapabilities caps = PARENT_CLASS (engine)->get_capabilities (engine);

  if (terret_engine_get_mode (engine) == TERRET_ENGINE_MODE_SESSION)
    return caps & ~TERRET_CAPABILITY_SESSION_PID;
  if (terret_container_config_is_direct (CONFIG (engine)))
    caps &= ~TERRET_CAPABILITY_INTERRUPT;
  return caps;
}

static char *
container_describe_containment (TerretEngine *engine)
{
  return terret_container_config_describe (CONFIG (engine),
                                           terret_engine_get_mode (engine) ==
                                             TERRET_ENGINE_MODE_SESSION);
}

/* The container runs commands, not the launcher (launcher=auto gave its
 * far side a probe): from now on this executor runs plain bash there,
 * and the run starts again that way. Twice at most: a run that chose the
 * launcher just before another's fallback finds it missing once more. */
static gboolean
container_run_again (TerretEngine  *engine,
                     TerretRequest *request,
                     const GError  *error)
{
  return g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_LAUNCHER) &&
         terret_container_config_fall_back (CONFIG (engine), error->message);
}

/* A far side without the launcher that was not run again is unavailable;
 * the first result without the launcher after a fallback says so. */
static TerretResult *
container_explain_outcome (TerretEngine        *engine,
                           const char          *session_key,
                           TerretShellChannel  *channel,
                           gboolean             polled,
                           TerretResult        *result,
                           GError              *failure,
                           GError             **error)
{
  if (result == NULL)
    {
      if (g_error_matches (failure, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_LAUNCHER))
        {
          terret_container_config_fall_back (CONFIG (engine), failure->message);
          failure->code = TERRET_EXEC_ERROR_UNAVAILABLE;
        }
      g_propagate_error (error, failure);
      return NULL;
    }
  if (!polled)
    {
      g_autofree char *notice = terret_container_config_take_notice (CONFIG (engine));

      if (notice != NULL)
        terret_result_add_notice (result, notice);
    }
  return result;
}

void
terret_container_engine_class_init (TerretEngineClass *klass)
{
  klass->create_channel = container_create_channel;
  klass->get_far_side = container_get_far_side;
  klass->prepare_spawn = container_prepare_spawn;
  klass->prepare_run = container_prepare_run;
  klass->get_capabilities = container_get_capabilities;
  klass->describe_containment = container_describe_containment;
  klass->run_again = container_run_again;
  klass->explain_outcome = container_explain_outcome;
}
