/* terret-ssh-failure.h: why an OpenSSH client failed, from what it said
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What went wrong with a connection, as far as the client's own messages
 * tell. */
typedef enum {
  TERRET_SSH_FAILURE_NONE,
  TERRET_SSH_FAILURE_REFUSED,
  TERRET_SSH_FAILURE_TIMED_OUT,
  TERRET_SSH_FAILURE_UNREACHABLE,
  TERRET_SSH_FAILURE_RESOLVE,
  TERRET_SSH_FAILURE_AUTHENTICATION,
  TERRET_SSH_FAILURE_HOST_KEY_CHANGED,
  TERRET_SSH_FAILURE_HOST_KEY_UNKNOWN,
  TERRET_SSH_FAILURE_CLOSED,
  TERRET_SSH_FAILURE_OTHER,
  /* The connection was made, but the remote shell could not start. */
  TERRET_SSH_FAILURE_NO_DIRECTORY,
  TERRET_SSH_FAILURE_NO_SHELL,
  TERRET_SSH_FAILURE_NO_LAUNCHER,
  TERRET_SSH_FAILURE_NO_LIMITS,
  /* The server refused a session on a connection that had no other. */
  TERRET_SSH_FAILURE_NO_SESSION,
} TerretSshFailure;

#define TERRET_SSH_FAILURE_IS_CONNECTION(f) \
  ((f) != TERRET_SSH_FAILURE_NONE && (f) != TERRET_SSH_FAILURE_NO_DIRECTORY && \
   (f) != TERRET_SSH_FAILURE_NO_SHELL && (f) != TERRET_SSH_FAILURE_NO_LAUNCHER && \
   (f) != TERRET_SSH_FAILURE_NO_LIMITS && (f) != TERRET_SSH_FAILURE_NO_SESSION)

/* What the remote command exits with when the cwd cannot be entered:
 * not a status a login shell or `env` gives for anything else. */
#define TERRET_SSH_NO_DIRECTORY_STATUS 209

/* And when the remote-launcher it was told to use is not there. */
#define TERRET_SSH_NO_LAUNCHER_STATUS 208

/* And when the remote shell refused a limit. */
#define TERRET_SSH_NO_LIMITS_STATUS 207

/* What `env` (and a POSIX shell) exits with when the command is not
 * found. */
#define TERRET_SSH_NO_SHELL_STATUS 127

int               terret_ssh_diagnostics_new  (int         *writer,
                                               GError     **error);
char             *terret_ssh_read_diagnostics (int          fd);
TerretSshFailure  terret_ssh_classify         (const char  *text,
                                               int          exit_status,
                                               char       **said);

G_END_DECLS
