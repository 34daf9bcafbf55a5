/* terret-ssh-channel.h: a shell on a remote terminal behind `ssh -tt`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

#define TERRET_TYPE_SSH_CHANNEL (terret_ssh_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretSshChannel, terret_ssh_channel, TERRET, SSH_CHANNEL, TerretShellChannel)

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
} TerretSshFailure;

#define TERRET_SSH_FAILURE_IS_CONNECTION(f) \
  ((f) != TERRET_SSH_FAILURE_NONE && (f) != TERRET_SSH_FAILURE_NO_DIRECTORY && \
   (f) != TERRET_SSH_FAILURE_NO_SHELL && (f) != TERRET_SSH_FAILURE_NO_LAUNCHER && \
   (f) != TERRET_SSH_FAILURE_NO_LIMITS)

void                 terret_ssh_channel_register      (GTypeModule         *module);
TerretShellChannel  *terret_ssh_channel_new           (void);
void                 terret_ssh_channel_set_client    (TerretSshChannel    *self,
                                                       const char * const  *client_argv,
                                                       const char          *destination,
                                                       const char          *remote_launcher);
char                *terret_ssh_channel_dup_destination (TerretSshChannel  *self);
TerretSshFailure     terret_ssh_channel_get_failure   (TerretSshChannel    *self,
                                                       char               **said);
char                *terret_ssh_channel_build_command (const char * const  *argv,
                                                       const char * const  *envp,
                                                       const char          *cwd,
                                                       const char          *remote_launcher);

G_END_DECLS
