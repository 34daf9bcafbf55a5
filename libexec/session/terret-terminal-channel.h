/* terret-terminal-channel.h: a session's shell on a pseudo-terminal made here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include "terret-shell-channel.h"

G_BEGIN_DECLS

#define TERRET_TYPE_TERMINAL_CHANNEL (terret_terminal_channel_get_type ())

TERRET_AVAILABLE_IN_0_3
G_DECLARE_FINAL_TYPE (TerretTerminalChannel, terret_terminal_channel, TERRET, TERMINAL_CHANNEL,
                      TerretShellChannel)

TERRET_AVAILABLE_IN_0_3
TerretShellChannel *terret_terminal_channel_new        (void);
TERRET_AVAILABLE_IN_0_3
gboolean            terret_terminal_channel_check_host (GError **error);

G_END_DECLS
