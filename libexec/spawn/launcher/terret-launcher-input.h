/* terret-launcher-input.h: whether a command waits for input on its terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plain C, for the launcher (a terminal made on a far side) and the
 * library (a pty of this host) alike.
 */

#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "terret-launcher-wire.h"

TerretWireInput terret_input_look (int       terminal,
                                   unsigned *flags,
                                   pid_t    *readers,
                                   size_t    readers_max,
                                   size_t   *n_readers);
TerretWireInput terret_input_look_process (pid_t     process,
                                           int       fd,
                                           unsigned *flags);
int             terret_input_is_stopped   (pid_t     pid);
