/* terret-pty-channel.h: a shell on a local pseudo-terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

#define TERRET_TYPE_PTY_CHANNEL (terret_pty_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretPtyChannel, terret_pty_channel, TERRET, PTY_CHANNEL, TerretShellChannel)

void                 terret_pty_channel_register      (GTypeModule *module);
TerretShellChannel  *terret_pty_channel_new           (void);
gboolean             terret_pty_channel_check_host    (GError     **error);

G_END_DECLS
