/* terret-process-private.h: what the library knows of its processes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-launcher-wire.h"
#include "terret-process.h"
#include "terret-types.h"

G_BEGIN_DECLS

/* A process a stop sequence signalled, and the last signal it sent it. */
typedef struct
{
  int pid;                      /* in the unit's pid namespace */
  int signum;
  gboolean is_process;          /* the process itself, not something it started */
  char *command;                /* (owned) its command line, as far as known; may be empty */
} TerretStopped;

TerretProcess *_terret_process_new               (GPid           pid,
                                                  int            unit_fd,
                                                  gboolean       far);
gboolean       _terret_process_is_gone           (TerretProcess *self);
gboolean       _terret_process_is_far            (TerretProcess *self);
void           _terret_process_reset_terminal    (TerretProcess *self);
gboolean       _terret_process_left_others       (TerretProcess *self);
GSource       *_terret_process_create_gone_source (TerretProcess *self);
int            _terret_process_get_fd            (TerretProcess *self);
TerretLimits   _terret_process_get_limits_hit    (TerretProcess *self);
void           _terret_process_stop              (TerretProcess *self,
                                                  double         grace,
                                                  int            first_signal,
                                                  guint          flags);
void           _terret_process_stop_cancel       (TerretProcess *self);
void           _terret_process_stop_command      (TerretProcess *self,
                                                  double         grace,
                                                  gint64         since_msec);
gboolean       _terret_process_stop_spare        (TerretProcess *self);
GSource       *_terret_process_create_spared_source (TerretProcess *self);
void           _terret_process_take_account      (TerretProcess *self,
                                                  int            timeout_msec);
gboolean       _terret_process_is_sparing        (TerretProcess *self,
                                                  gint64        *deadline);
void           _terret_process_finish_stop       (TerretProcess *self);
gboolean       _terret_process_get_stop          (TerretProcess *self,
                                                  int           *signum,
                                                  guint         *msec);
GArray        *_terret_process_get_stopped       (TerretProcess *self);
TerretWireInput _terret_process_look_input       (TerretProcess *self,
                                                  int            timeout_msec,
                                                  unsigned      *flags);
TerretStopSignal _terret_stop_signal_from_signum (int            signum);
gboolean       _terret_process_wait_gone         (TerretProcess *self,
                                                  int            timeout_msec);

G_END_DECLS
