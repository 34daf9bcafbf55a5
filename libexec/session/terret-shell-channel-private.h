/* terret-shell-channel-private.h: where a channel's shell is
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-shell-channel.h"

G_BEGIN_DECLS

/* Where a channel's shell runs, as the unit that holds it sees it: the
 * one question behind a terminal looked at, a stop that spares the
 * shell, and a stuck start described. */
typedef enum
{
  TERRET_SHELL_HERE,            /* this host's: the unit's process is the shell, its terminal ours */
  TERRET_SHELL_FAR,             /* a far side's, under a far launcher's unit that sees it there */
  TERRET_SHELL_BEHIND_CLIENT,   /* behind a client the unit holds here (ssh, an engine's exec,
                                 * script(1)): nothing here sees the shell's own processes */
} TerretShellReach;

TerretShellReach _terret_shell_channel_get_reach (TerretShellChannel *self);

G_END_DECLS
