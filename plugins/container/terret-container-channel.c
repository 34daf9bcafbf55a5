/* terret-container-channel.c: a shell on a terminal made in the container
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "terret-container-channel.h"

/*
 * TerretContainerChannel:
 *
 * Carries a session's bash on a terminal the far launcher makes in the
 * container (see TerretFarSide): this side holds one end of a socket
 * pair whose bytes the bridge carries to and from the terminal's master
 * there. The terminal is made in the protocol's modes; as over ssh, its
 * modes cannot be set from this side, so the channel has no prepare_run
 * and the session re-asserts them from inside after every command.
 */
struct _TerretContainerChannel
{
  TerretShellChannel parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretContainerChannel, terret_container_channel,
                                TERRET_TYPE_SHELL_CHANNEL, G_TYPE_FLAG_FINAL, {})

static gboolean
terret_container_channel_spawn (TerretShellChannel  *channel,
                                TerretLauncher      *launcher,
                                const char * const  *argv,
                                GError             **error)
{
  g_autoptr(TerretProcess) process = NULL;
  int pair[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not make the shell's terminal socket: %s", g_strerror (saved_errno));
      return FALSE;
    }

  terret_launcher_take_terminal (launcher, pair[1]);
  process = terret_launcher_spawn (launcher, argv, error);
  if (process == NULL)
    {
      close (pair[0]);
      return FALSE;
    }

  terret_shell_channel_set_process (channel, process, pair[0], pair[0]);
  return TRUE;
}

static void
terret_container_channel_class_init (TerretContainerChannelClass *klass)
{
  TERRET_SHELL_CHANNEL_CLASS (klass)->spawn = terret_container_channel_spawn;
}

static void
terret_container_channel_class_finalize (TerretContainerChannelClass *klass)
{
}

static void
terret_container_channel_init (TerretContainerChannel *self)
{
}

void
terret_container_channel_register (GTypeModule *module)
{
  terret_container_channel_register_type (module);
}

TerretShellChannel *
terret_container_channel_new (void)
{
  return g_object_new (TERRET_TYPE_CONTAINER_CHANNEL, NULL);
}
