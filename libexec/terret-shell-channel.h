/* terret-shell-channel.h: what carries one shell's terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SHELL_CHANNEL (terret_shell_channel_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_DERIVABLE_TYPE (TerretShellChannel, terret_shell_channel, TERRET, SHELL_CHANNEL, GObject)

/**
 * TerretShellChannelClass:
 * @parent_class: the parent class
 * @spawn: start the shell @argv with @envp in @cwd and hand the process
 *   and its byte streams over with
 *   [method@Terret.ShellChannel.set_process]. Required.
 * @prepare_run: put the terminal into the state the protocol needs (no
 *   echo, no output processing, non-canonical input, no flow control),
 *   from the host side, before every exchange. %NULL when the channel
 *   cannot: the session then asserts the modes with `stty` in its
 *   start-up handshake instead.
 * @create_exit_source: create a #GSource that dispatches (with a
 *   #GSourceFunc callback) once the shell has ended. The default watches
 *   the process given to [method@Terret.ShellChannel.set_process] with a
 *   child watch.
 * @check_exited: without blocking, find out whether the shell has ended.
 *   The default reaps the process with `waitpid (WNOHANG)`.
 * @kill: make the shell and everything it started end now, without
 *   waiting and without closing anything; callable from any thread. The
 *   default SIGKILLs the process group the process leads (or the process
 *   alone when it leads none).
 * @terminate: end the shell and everything it started, close the
 *   streams and reap the process. The default kills as @kill does, closes
 *   the descriptors and reaps the process.
 *
 * The virtual methods of [class@Terret.ShellChannel].
 *
 * Since: 0.1
 */
struct _TerretShellChannelClass
{
  GObjectClass parent_class;

  gboolean  (*spawn)              (TerretShellChannel  *self,
                                   const char * const  *argv,
                                   const char * const  *envp,
                                   const char          *cwd,
                                   GError             **error);
  gboolean  (*prepare_run)        (TerretShellChannel  *self,
                                   GError             **error);
  GSource  *(*create_exit_source) (TerretShellChannel  *self);
  gboolean  (*check_exited)       (TerretShellChannel  *self);
  void      (*kill)               (TerretShellChannel  *self);
  void      (*terminate)          (TerretShellChannel  *self);

  /*< private >*/
  gpointer _reserved[8];
};

TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_spawn              (TerretShellChannel  *self,
                                                   const char * const  *argv,
                                                   const char * const  *envp,
                                                   const char          *cwd,
                                                   GError             **error);
TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_can_prepare_run    (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_prepare_run        (TerretShellChannel  *self,
                                                   GError             **error);
TERRET_AVAILABLE_IN_0_1
GSource  *terret_shell_channel_create_exit_source (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_check_exited       (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
void      terret_shell_channel_kill               (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
void      terret_shell_channel_terminate          (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_is_open            (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
GPid      terret_shell_channel_get_pid            (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gboolean  terret_shell_channel_get_exited         (TerretShellChannel  *self,
                                                   int                 *wait_status);
TERRET_AVAILABLE_IN_0_1
int       terret_shell_channel_get_read_fd        (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
int       terret_shell_channel_get_write_fd       (TerretShellChannel  *self);
TERRET_AVAILABLE_IN_0_1
gssize    terret_shell_channel_read               (TerretShellChannel  *self,
                                                   guint8              *buffer,
                                                   gsize                size,
                                                   GError             **error);
TERRET_AVAILABLE_IN_0_1
gssize    terret_shell_channel_write              (TerretShellChannel  *self,
                                                   const guint8        *data,
                                                   gsize                len,
                                                   GError             **error);

/* For subclasses */
TERRET_AVAILABLE_IN_0_1
void      terret_shell_channel_set_process        (TerretShellChannel  *self,
                                                   GPid                 pid,
                                                   int                  read_fd,
                                                   int                  write_fd);
TERRET_AVAILABLE_IN_0_1
void      terret_shell_channel_set_exited         (TerretShellChannel  *self,
                                                   int                  wait_status);

G_END_DECLS
