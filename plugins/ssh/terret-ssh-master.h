/* terret-ssh-master.h: one OpenSSH master connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-ssh-failure.h"

G_BEGIN_DECLS

typedef enum {
  TERRET_SSH_MASTER_CONNECTING,
  TERRET_SSH_MASTER_UP,
  TERRET_SSH_MASTER_GONE,
} TerretSshMasterState;

/*
 * TerretSshMaster:
 *
 * `ssh -M -N` under a launcher unit of its own, listening on a private
 * ControlPath. It is up when its stdout closes while it runs: with
 * ControlPersist=no, ssh replaces its stdout with /dev/null once it is
 * logged in and listens for clients (OpenSSH 7.7 and later), so the read
 * end of a pipe on it is an fd a main loop can watch; one that fails
 * closes it by exiting. Its stderr is kept to explain a failure.
 *
 * Not locked itself: the pool (TerretSshMux) guards its masters.
 */
typedef struct
{
  guint ref;
  char *signature;              /* (owned) the options it was opened with */
  char *path;                   /* (owned) its ControlPath */
  char *host;                   /* (owned) its destination, for `ssh -O exit` */
  TerretProcess *process;       /* (owned) (nullable) until it is shut down */
  int ready_fd;                 /* the read end of its stdout */
  int diagnostics_fd;           /* its stderr */
  TerretSshMasterState state;
  guint n_tickets;              /* the pool's: sessions sent to it or waiting for it */
  gboolean full;                /* the pool's: it refused a session, and none left since */
  TerretSshFailure failure;     /* once GONE */
  char *said;                   /* (owned) (nullable) */
} TerretSshMaster;

TerretSshMaster *terret_ssh_master_open      (TerretLauncher      *launcher,
                                              const char          *path,
                                              const char          *signature,
                                              const char * const  *argv,
                                              GError             **error);
TerretSshMaster *terret_ssh_master_ref       (TerretSshMaster     *master);
void             terret_ssh_master_unref     (TerretSshMaster     *master);
void             terret_ssh_master_update    (TerretSshMaster     *master);
void             terret_ssh_master_check     (TerretSshMaster     *master);
void             terret_ssh_master_shut_down (TerretSshMaster     *master,
                                              TerretLauncher      *launcher);

G_END_DECLS
