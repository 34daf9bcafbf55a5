/* terret-terminal-channel.c: a session's shell on a pseudo-terminal made here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "terret-launcher-terminal.h"
#include "terret-launcher.h"
#include "terret-terminal-channel.h"

/**
 * TerretTerminalChannel:
 *
 * Carries a session's bash on a pseudo-terminal made on this host: its
 * subsidiary is handed to the launcher with the spawn request, and bash
 * takes it as its controlling terminal in a session of its own, so it
 * leads the process group that every child joins (job control is off),
 * which ^C on the terminal reaches. The launcher may be this host's or a
 * far side's that takes descriptors (a Flatpak app's host): bash runs
 * there, on the terminal made here. The modes the session protocol
 * relies on (docs/protocol.md) are set on the master, from this side,
 * before every exchange.
 *
 * It is the channel of the pty backend; a backend whose shell takes a
 * terminal of this host returns one from its `create_channel`.
 *
 * Since: 0.3
 */
struct _TerretTerminalChannel
{
  TerretShellChannel parent_instance;
};

G_DEFINE_FINAL_TYPE (TerretTerminalChannel, terret_terminal_channel, TERRET_TYPE_SHELL_CHANNEL)

/* The modes the protocol relies on (terret-launcher-terminal.h), set on
 * the master: Linux applies a master's termios ioctls to the terminal
 * itself. */
static gboolean
set_modes (int      fd,
           GError **error)
{
  struct termios modes, wanted;
  int saved_errno;

  if (tcgetattr (fd, &modes) < 0)
    goto fail;

  wanted = modes;
  terret_terminal_protocol_modes (&wanted);

  /* This runs before every exchange; the usual case is that nothing
   * changed, and one read is then all it costs. */
  if (wanted.c_lflag == modes.c_lflag && wanted.c_oflag == modes.c_oflag &&
      wanted.c_iflag == modes.c_iflag && wanted.c_cc[VMIN] == modes.c_cc[VMIN] &&
      wanted.c_cc[VTIME] == modes.c_cc[VTIME] && wanted.c_cc[VINTR] == modes.c_cc[VINTR])
    return TRUE;

  if (tcsetattr (fd, TCSANOW, &wanted) == 0)
    return TRUE;

fail:
  saved_errno = errno;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Could not set the terminal's modes: %s", g_strerror (saved_errno));
  return FALSE;
}

static int
open_master (GError **error)
{
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);

  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0)
    {
      int saved_errno = errno;

      if (master >= 0)
        close (master);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open a pseudo-terminal: %s", g_strerror (saved_errno));
      return -1;
    }

  return master;
}

static gboolean
terret_terminal_channel_spawn (TerretShellChannel  *channel,
                               TerretLauncher      *launcher,
                               const char * const  *argv,
                               GError             **error)
{
  struct winsize size = { TERRET_TERMINAL_ROWS, TERRET_TERMINAL_COLUMNS, 0, 0 };
  g_autoptr(TerretProcess) process = NULL;
  char name[128];
  int master, slave;

  master = open_master (error);
  if (master < 0)
    return FALSE;

  /* O_NOCTTY: a host with no controlling terminal must not acquire this
   * one by opening it. */
  if (ptsname_r (master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    {
      int saved_errno = errno;

      close (master);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open a pseudo-terminal: %s", g_strerror (saved_errno));
      return FALSE;
    }

  /* In place before bash starts, so not even its first prompt is echoed
   * or rewritten. */
  ioctl (master, TIOCSWINSZ, &size);
  if (!set_modes (master, error))
    {
      close (slave);
      close (master);
      return FALSE;
    }

  terret_launcher_take_terminal (launcher, slave);
  process = terret_launcher_spawn (launcher, argv, error);
  if (process == NULL)
    {
      close (master);
      return FALSE;
    }

  terret_shell_channel_set_process (channel, process, master, master);
  return TRUE;
}

static gboolean
terret_terminal_channel_prepare_run (TerretShellChannel  *channel,
                                     GError             **error)
{
  return set_modes (terret_shell_channel_get_write_fd (channel), error);
}

static void
terret_terminal_channel_class_init (TerretTerminalChannelClass *klass)
{
  TerretShellChannelClass *channel_class = TERRET_SHELL_CHANNEL_CLASS (klass);

  channel_class->spawn = terret_terminal_channel_spawn;
  channel_class->prepare_run = terret_terminal_channel_prepare_run;
}

static void
terret_terminal_channel_init (TerretTerminalChannel *self)
{
}

/**
 * terret_terminal_channel_new:
 *
 * A channel for one session's shell, on a pseudo-terminal made here.
 *
 * Returns: (transfer full): a new channel
 *
 * Since: 0.3
 */
TerretShellChannel *
terret_terminal_channel_new (void)
{
  return g_object_new (TERRET_TYPE_TERMINAL_CHANNEL, NULL);
}

/**
 * terret_terminal_channel_check_host:
 * @error: return location for a #GError
 *
 * Whether this host can give a shell a pseudo-terminal at all (a
 * container without /dev/ptmx cannot), for a backend's availability
 * check.
 *
 * Returns: %TRUE when it can
 *
 * Since: 0.3
 */
gboolean
terret_terminal_channel_check_host (GError **error)
{
  int master;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  master = open_master (error);
  if (master < 0)
    return FALSE;
  close (master);
  return TRUE;
}
