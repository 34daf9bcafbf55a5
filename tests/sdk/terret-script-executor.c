/* terret-script-executor.c: a backend written against the installed SDK only
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The `script` backend runs each session's bash under util-linux
 * script(1), which gives the shell a terminal of its own while talking to
 * this process over two pipes: the same shape as `ssh -tt`. Everything
 * but starting that process is the SDK's TerretSessionExecutor and
 * TerretShellSession. It exists to prove that a backend builds against
 * an installed terret-exec with pkg-config alone, and passes the
 * conformance kit.
 */

#include <signal.h>
#include <unistd.h>

#include <gio/gio.h>
#include <terret-exec.h>

/* --- The channel ------------------------------------------------------- */

#define TERRET_TYPE_SCRIPT_CHANNEL (terret_script_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretScriptChannel, terret_script_channel, TERRET, SCRIPT_CHANNEL, TerretShellChannel)

struct _TerretScriptChannel
{
  TerretShellChannel parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretScriptChannel, terret_script_channel,
                                TERRET_TYPE_SHELL_CHANNEL, G_TYPE_FLAG_FINAL, {})

static void
child_setup (gpointer user_data)
{
  /* A session of its own: the host's terminal and ^C never reach it, and
   * it leads the process group the channel's default kill ends. */
  setsid ();
  signal (SIGPIPE, SIG_DFL);
}

static gboolean
terret_script_channel_spawn (TerretShellChannel  *channel,
                             const char * const  *argv,
                             const char * const  *envp,
                             const char          *cwd,
                             GError             **error)
{
  g_autoptr(GString) command = g_string_new ("exec");
  const char *script_argv[] = { "script", "--quiet", "--return", "--flush",
                                "--command", NULL, "/dev/null", NULL };
  GPid pid = 0;
  int stdin_fd = -1, stdout_fd = -1;

  for (guint i = 0; argv[i] != NULL; i++)
    {
      g_autofree char *quoted = g_shell_quote (argv[i]);

      g_string_append_printf (command, " %s", quoted);
    }
  script_argv[5] = command->str;

  if (!g_spawn_async_with_pipes_and_fds (cwd, script_argv, envp,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH |
                                         G_SPAWN_STDERR_TO_DEV_NULL,
                                         child_setup, NULL,
                                         -1, -1, -1, NULL, NULL, 0,
                                         &pid, &stdin_fd, &stdout_fd, NULL, error))
    return FALSE;

  terret_shell_channel_set_process (channel, pid, stdout_fd, stdin_fd);

  return TRUE;
}

static void
terret_script_channel_class_init (TerretScriptChannelClass *klass)
{
  TERRET_SHELL_CHANNEL_CLASS (klass)->spawn = terret_script_channel_spawn;
}

static void
terret_script_channel_class_finalize (TerretScriptChannelClass *klass)
{
}

static void
terret_script_channel_init (TerretScriptChannel *self)
{
}

/* --- The executor ------------------------------------------------------ */

#define TERRET_TYPE_SCRIPT_EXECUTOR (terret_script_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretScriptExecutor, terret_script_executor, TERRET, SCRIPT_EXECUTOR, TerretSessionExecutor)

struct _TerretScriptExecutor
{
  TerretSessionExecutor parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretScriptExecutor, terret_script_executor,
                                TERRET_TYPE_SESSION_EXECUTOR, G_TYPE_FLAG_FINAL, {})

static TerretShellChannel *
terret_script_executor_create_channel (TerretSessionExecutor  *executor,
                                       const char             *session_key,
                                       GError                **error)
{
  return g_object_new (TERRET_TYPE_SCRIPT_CHANNEL, NULL);
}

static gboolean
terret_script_executor_check_available (TerretSessionExecutor  *executor,
                                        GCancellable           *cancellable,
                                        GError                **error)
{
  g_autofree char *script = g_find_program_in_path ("script");

  if (script == NULL)
    {
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                           "The script backend needs util-linux's script(1) in PATH");
      return FALSE;
    }

  return TRUE;
}

static void
terret_script_executor_class_init (TerretScriptExecutorClass *klass)
{
  TerretSessionExecutorClass *session_class = TERRET_SESSION_EXECUTOR_CLASS (klass);

  session_class->create_channel = terret_script_executor_create_channel;
  session_class->check_available = terret_script_executor_check_available;
}

static void
terret_script_executor_class_finalize (TerretScriptExecutorClass *klass)
{
}

static void
terret_script_executor_init (TerretScriptExecutor *self)
{
}

/* --- The module -------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  terret_script_channel_register_type (G_TYPE_MODULE (module));
  terret_script_executor_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_script_executor_get_type (), "script", 1);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *)TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
