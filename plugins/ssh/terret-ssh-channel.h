/* terret-ssh-channel.h: a shell on a remote terminal behind `ssh -tt`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-ssh-failure.h"
#include "terret-ssh-mux.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SSH_CHANNEL (terret_ssh_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretSshChannel, terret_ssh_channel, TERRET, SSH_CHANNEL, TerretShellChannel)

void                 terret_ssh_channel_register      (GTypeModule         *module);
TerretShellChannel  *terret_ssh_channel_new           (void);
void                 terret_ssh_channel_set_client    (TerretSshChannel    *self,
                                                       const char * const  *client_argv,
                                                       TerretSshMux        *mux,
                                                       const char * const  *master_argv,
                                                       const char          *destination,
                                                       const char          *remote_launcher);
char                *terret_ssh_channel_dup_destination (TerretSshChannel  *self);
void                 terret_ssh_channel_settle        (TerretSshChannel    *self);
TerretSshFailure     terret_ssh_channel_get_failure   (TerretSshChannel    *self,
                                                       char               **said);
char                *terret_ssh_channel_build_command (const char * const  *argv,
                                                       const char * const  *envp,
                                                       const char          *cwd,
                                                       const char          *remote_launcher);

G_END_DECLS
