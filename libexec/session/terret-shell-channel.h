/* terret-shell-channel.h: what carries one shell's terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-launcher.h"
#include "terret-process.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SHELL_CHANNEL (terret_shell_channel_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_DERIVABLE_TYPE (TerretShellChannel, terret_shell_channel, TERRET, SHELL_CHANNEL, GObject)

/**
 * TerretShellChannelClass:
 * @parent_class: the parent class
 * @spawn: start the process that carries the shell @argv, through
 *   @launcher, and hand it and its byte streams over with
 *   [method@Terret.ShellChannel.set_process]. @launcher holds the
 *   shell's environment and working directory, from the executor's
 *   settings; a channel whose shell is local gives it a terminal and
 *   spawns @argv, a remote one spawns a client that starts @argv on the
 *   far side. Required.
 * @prepare_run: put the terminal into the state the protocol needs (no
 *   echo, no output processing, non-canonical input, no input
 *   translation, no flow control), from the host side, before every
 *   exchange. %NULL when the channel
 *   cannot: the session then sets the modes with `stty` from inside the
 *   shell, after every command.
 * @terminate: end the process and everything it started, close the
 *   descriptors and wait until nothing is left. A subclass that wants to
 *   know how its process ended (a client's diagnostics) chains up, then
 *   reads it. Optional.
 * @get_shell_end: after the process ended, tell how the shell did, as a
 *   wait status, when the channel can tell. The default gives the
 *   process's own (the process is the shell); a remote channel gives what
 *   its client passed on, or %FALSE when the client's status says
 *   nothing of the shell's (ssh's 255).
 *
 * The virtual methods of [class@Terret.ShellChannel].
 *
 * Since: 0.1
 */
struct _TerretShellChannelClass
{
  GObjectClass parent_class;

  gboolean  (*spawn)       (TerretShellChannel  *self,
                            TerretLauncher      *launcher,
                            const char * const  *argv,
                            GError             **error);
  gboolean  (*prepare_run) (TerretShellChannel  *self,
                            GError             **error);
  void      (*terminate)   (TerretShellChannel  *self);
  gboolean  (*get_shell_end) (TerretShellChannel *self,
                              int                *wait_status);

  /*< private >*/
  gpointer _reserved[7];
};

TERRET_AVAILABLE_IN_0_2
gboolean       terret_shell_channel_spawn           (TerretShellChannel  *self,
                                                     TerretLauncher      *launcher,
                                                     const char * const  *argv,
                                                     GError             **error);
TERRET_AVAILABLE_IN_0_1
gboolean       terret_shell_channel_can_prepare_run (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gboolean       terret_shell_channel_prepare_run     (TerretShellChannel  *self,
                                                     GError             **error);
TERRET_AVAILABLE_IN_0_1
void           terret_shell_channel_kill            (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
void           terret_shell_channel_terminate       (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_2
gboolean       terret_shell_channel_get_shell_end   (TerretShellChannel  *self,
                                                     int                 *wait_status);
TERRET_AVAILABLE_IN_0_1
gboolean       terret_shell_channel_is_open         (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_2
TerretProcess *terret_shell_channel_get_process     (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
int            terret_shell_channel_get_read_fd     (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
int            terret_shell_channel_get_write_fd    (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gssize         terret_shell_channel_read            (TerretShellChannel  *self,
                                                     guint8              *buffer,
                                                     gsize                size,
                                                     GError             **error);
TERRET_AVAILABLE_IN_0_1
gssize         terret_shell_channel_write           (TerretShellChannel  *self,
                                                     const guint8        *data,
                                                     gsize                len,
                                                     GError             **error);

/* For subclasses */
TERRET_AVAILABLE_IN_0_2
void           terret_shell_channel_set_process     (TerretShellChannel  *self,
                                                     TerretProcess       *process,
                                                     int                  read_fd,
                                                     int                  write_fd);

TERRET_AVAILABLE_IN_0_3
gboolean      terret_shell_is_variable_name (const char *name,
                                             gssize      length);

G_END_DECLS
