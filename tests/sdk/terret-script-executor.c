/* terret-script-executor.c: a backend written against the installed SDK only
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The `script` backend runs each session's bash under util-linux
 * script(1), which gives the shell a terminal of its own while talking to
 * this process over two pipes: the same shape as `ssh -tt`. Everything
 * but starting that process is the SDK's TerretSessionExecutor. It exists to prove that a backend builds against
 * an installed terret-exec with pkg-config alone, and passes the
 * conformance kit.
 */

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
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

static gboolean
terret_script_channel_spawn (TerretShellChannel  *channel,
                             TerretLauncher      *launcher,
                             const char * const  *argv,
                             GError             **error)
{
  g_autoptr(GString) command = g_string_new ("exec");
  g_autoptr(TerretProcess) process = NULL;
  const char *script_argv[] = { "script", "--quiet", "--return", "--flush",
                                "--command", NULL, "/dev/null", NULL };
  int to_script[2], from_script[2];

  for (guint i = 0; argv[i] != NULL; i++)
    {
      g_autofree char *quoted = g_shell_quote (argv[i]);

      g_string_append_printf (command, " %s", quoted);
    }
  script_argv[5] = command->str;

  if (!g_unix_open_pipe (to_script, FD_CLOEXEC, error))
    return FALSE;
  if (!g_unix_open_pipe (from_script, FD_CLOEXEC, error))
    {
      close (to_script[0]);
      close (to_script[1]);
      return FALSE;
    }

  /* script(1) reads our pipe and writes to the other; its own terminal
   * is the shell's. stderr stays /dev/null. */
  terret_launcher_take_fd (launcher, to_script[0], 0);
  terret_launcher_take_fd (launcher, from_script[1], 1);
  process = terret_launcher_spawn (launcher, script_argv, error);
  if (process == NULL)
    {
      close (to_script[1]);
      close (from_script[0]);
      return FALSE;
    }

  terret_shell_channel_set_process (channel, process, from_script[0], to_script[1]);
  return TRUE;
}

/* script --return exits with the shell's status, or 128 + N when a
 * signal N killed it, which an `exit 137` cannot be told apart from. */
static gboolean
terret_script_channel_get_shell_end (TerretShellChannel *channel,
                                     int                *wait_status)
{
  TerretProcess *process = terret_shell_channel_get_process (channel);
  int status = 0;

  if (process == NULL || !terret_process_get_exited (process, &status) ||
      !WIFEXITED (status) || WEXITSTATUS (status) >= 128)
    return FALSE;

  *wait_status = status;
  return TRUE;
}

static void
terret_script_channel_class_init (TerretScriptChannelClass *klass)
{
  TerretShellChannelClass *channel_class = TERRET_SHELL_CHANNEL_CLASS (klass);

  channel_class->spawn = terret_script_channel_spawn;
  channel_class->get_shell_end = terret_script_channel_get_shell_end;
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
