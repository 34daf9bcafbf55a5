/* terret-ssh-mux.h: the master connections an executor's sessions share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-ssh-failure.h"

G_BEGIN_DECLS

typedef struct _TerretSshMux TerretSshMux;
typedef struct _TerretSshMuxTicket TerretSshMuxTicket;

TerretSshMux       *terret_ssh_mux_new                     (void);
TerretSshMux       *terret_ssh_mux_ref                     (TerretSshMux        *self);
void                terret_ssh_mux_unref                   (TerretSshMux        *self);
void                terret_ssh_mux_close                   (TerretSshMux        *self);

TerretSshMuxTicket *terret_ssh_mux_join                    (TerretSshMux        *self,
                                                            TerretLauncher      *launcher,
                                                            const char * const  *master_argv,
                                                            GError             **error);
char              **terret_ssh_mux_ticket_wrap             (TerretSshMuxTicket  *self,
                                                            const char * const  *client_argv);
int                 terret_ssh_mux_ticket_steal_wrapper_fd (TerretSshMuxTicket  *self);
void                terret_ssh_mux_ticket_start            (TerretSshMuxTicket  *self,
                                                            TerretLauncher      *launcher,
                                                            int                  attempts_fd);
void                terret_ssh_mux_ticket_settle           (TerretSshMuxTicket  *self);
TerretSshFailure    terret_ssh_mux_ticket_leave            (TerretSshMuxTicket  *self,
                                                            char               **said);
TerretSshMuxTicket *terret_ssh_mux_ticket_ref              (TerretSshMuxTicket  *self);
void                terret_ssh_mux_ticket_unref            (TerretSshMuxTicket  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSshMux, terret_ssh_mux_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSshMuxTicket, terret_ssh_mux_ticket_unref)

G_END_DECLS
