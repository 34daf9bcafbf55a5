/* terret-pty-executor.c: one persistent bash on a local pty per session key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <terret-exec.h>

/*
 * TerretPtyExecutor:
 *
 * The `pty` backend: one bash per session key, spawned on first use on a
 * local pseudo-terminal and kept for every later run of that key, so `cd`
 * and `export` persist as in a terminal. Everything but the channel (the
 * session table, the settings, the protocol) is the SDK's
 * TerretSessionExecutor, and the channel is the SDK's
 * TerretTerminalChannel; this file checks that the host has bash and
 * pseudo-terminals.
 */
#define TERRET_TYPE_PTY_EXECUTOR (terret_pty_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretPtyExecutor, terret_pty_executor, TERRET, PTY_EXECUTOR, TerretSessionExecutor)

struct _TerretPtyExecutor
{
  TerretSessionExecutor parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretPtyExecutor, terret_pty_executor, TERRET_TYPE_SESSION_EXECUTOR,
                                G_TYPE_FLAG_FINAL, {})

static TerretShellChannel *
terret_pty_executor_create_channel (TerretSessionExecutor  *executor,
                                    const char             *session_key,
                                    GError                **error)
{
  return terret_terminal_channel_new ();
}

static gboolean
terret_pty_executor_check_available (TerretSessionExecutor  *executor,
                                     GCancellable           *cancellable,
                                     GError                **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *shell = NULL;
  g_autofree char *shell_path = NULL;

  g_object_get (executor, "shell", &shell, NULL);

  shell_path = g_find_program_in_path (shell);
  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The pty backend needs bash: “%s” was not found in PATH", shell);
      return FALSE;
    }

  if (!terret_terminal_channel_check_host (&local_error))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The pty backend needs pseudo-terminals: %s", local_error->message);
      return FALSE;
    }

  return TRUE;
}

static void
terret_pty_executor_class_init (TerretPtyExecutorClass *klass)
{
  TerretSessionExecutorClass *session_class = TERRET_SESSION_EXECUTOR_CLASS (klass);

  session_class->create_channel = terret_pty_executor_create_channel;
  session_class->check_available = terret_pty_executor_check_available;
}

static void
terret_pty_executor_class_finalize (TerretPtyExecutorClass *klass)
{
}

static void
terret_pty_executor_init (TerretPtyExecutor *self)
{
}

/* --- Module ------------------------------------------------------------ */

static void
pty_module_load (GTypeModule *module)
{
  terret_pty_executor_register_type (module);
  /* Highest of all: on a host with bash, a persistent session is what a
   * caller expects of a shell. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_pty_executor_get_type (), "pty", 100);
}

TERRET_DEFINE_BACKEND_MODULE (pty_module_load)
