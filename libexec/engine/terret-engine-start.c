/* terret-engine-start.c: what a shell or a run of an engine starts with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "terret-engine-private.h"
#include "terret-error.h"

/* Past this, a command is not passed as an argument (the kernel caps one
 * at 128 KiB) but read by the shell from a descriptor. */
#define LONG_COMMAND (64 * 1024)

/**
 * terret_engine_dup_environ:
 * @self: an engine
 * @request: (nullable): a run's request, in %TERRET_ENGINE_MODE_ONESHOT
 * @inherit: whether to start from the host's environment
 * @error: return location for a #GError
 *
 * Builds the environment a shell (%TERRET_ENGINE_MODE_SESSION) or a run
 * of @request (%TERRET_ENGINE_MODE_ONESHOT) starts with under the
 * current settings: the host's (with @inherit); in a session, the
 * defaults for a host with nobody at the terminal (`TERM=dumb`,
 * `PAGER=cat`, `NO_COLOR=1`, ...) and an empty `HISTFILE`; then the env
 * setting; then the request's own entries. For a backend that runs its
 * shells elsewhere through a client, without @inherit: the host's
 * environment means nothing there, and the client, which runs here,
 * keeps it.
 *
 * Returns: (transfer full) (array zero-terminated=1): the environment, or
 *   %NULL with %TERRET_EXEC_ERROR_INVALID_CONFIG (an entry of the env
 *   setting) or %TERRET_EXEC_ERROR_INVALID_REQUEST (the request's) when an
 *   entry is not `VARIABLE=value`
 *
 * Since: 0.3
 */
char **
terret_engine_dup_environ (TerretEngine   *self,
                           TerretRequest  *request,
                           gboolean        inherit,
                           GError        **error)
{
  g_autoptr(TerretSettings) settings = NULL;
  static const char * const nothing[] = { NULL };

  g_return_val_if_fail (TERRET_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request == NULL || TERRET_IS_REQUEST (request), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  settings = _terret_engine_snapshot (self);
  return _terret_settings_build_environ (settings, inherit ? NULL : nothing,
                                         request != NULL ? terret_request_get_env (request) : NULL,
                                         error);
}

/**
 * terret_engine_append_shell_command:
 * @self: an engine
 * @request: the run's request
 * @launcher: the run's launcher
 * @target_fd: the descriptor a long command is read from: 3, or 0 (the
 *   standard input, which is `/dev/null` again before the command runs)
 *   for a client that passes only its standard input on
 * @argv: (element-type filename): the argument vector being built; the
 *   shell's words are appended
 * @error: return location for a #GError
 *
 * Appends `SHELL -c COMMAND` for @request to @argv, the shell being the
 * shell setting. A command longer than one argument may be is read by the
 * shell from @target_fd, given to @launcher, instead. What the default
 * [vfunc@Terret.Engine.prepare_run] does; a subclass that wraps the shell
 * in a client appends the shell's words after the client's own.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.3
 */
gboolean
terret_engine_append_shell_command (TerretEngine    *self,
                                    TerretRequest   *request,
                                    TerretLauncher  *launcher,
                                    int              target_fd,
                                    GPtrArray       *argv,
                                    GError         **error)
{
  g_autoptr(TerretSettings) settings = NULL;
  const char *command;
  gsize len;
  int fd;

  g_return_val_if_fail (TERRET_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (TERRET_IS_REQUEST (request), FALSE);
  g_return_val_if_fail (TERRET_IS_LAUNCHER (launcher), FALSE);
  g_return_val_if_fail (target_fd == 0 || target_fd == 3, FALSE);
  g_return_val_if_fail (argv != NULL, FALSE);

  settings = _terret_engine_snapshot (self);
  command = terret_request_get_command (request);
  len = strlen (command);

  g_ptr_array_add (argv, g_strdup (settings->shell));
  g_ptr_array_add (argv, g_strdup ("-c"));
  if (len <= LONG_COMMAND)
    {
      g_ptr_array_add (argv, g_strdup (command));
      return TRUE;
    }

  /* A memfd, seekable, so bash's read takes it in blocks; the variable
   * is gone before the command runs, and so is the descriptor. */
  fd = memfd_create ("terret-command", MFD_CLOEXEC);
  if (fd < 0 || write (fd, command, len) != (gssize)len || lseek (fd, 0, SEEK_SET) != 0)
    {
      if (fd >= 0)
        close (fd);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Could not hand the shell a command of %" G_GSIZE_FORMAT " bytes", len);
      return FALSE;
    }
  terret_launcher_take_fd (launcher, fd, target_fd);
  g_ptr_array_add (argv, g_strdup (target_fd == 3
                                   ? "IFS= \\builtin read -r -d '' __terret_command <&3; "
                                     "\\exec 3<&-; "
                                     "\\builtin eval \"\\builtin unset __terret_command; "
                                     "$__terret_command\""
                                   : "IFS= \\builtin read -r -d '' __terret_command; "
                                     "\\exec 0</dev/null; "
                                     "\\builtin eval \"\\builtin unset __terret_command; "
                                     "$__terret_command\""));
  return TRUE;
}
