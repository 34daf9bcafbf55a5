/* terret-flatpak-channel.c: a session's bash on the host, on a terminal made here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <gio/gio.h>

#include "terret-flatpak-channel.h"

/*
 * TerretFlatpakChannel:
 *
 * Carries a session's bash on the app's host on a pseudo-terminal made
 * in the app: its subsidiary is handed to the host launcher with the
 * spawn request, as to a local one, and bash takes it as its controlling
 * terminal there, so ^C on it reaches bash's process group on the host.
 * The master stays here, where the modes the session protocol relies on
 * are set before every exchange, as the pty backend does.
 */
struct _TerretFlatpakChannel
{
  TerretShellChannel parent_instance;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakChannel, terret_flatpak_channel,
                                TERRET_TYPE_SHELL_CHANNEL, G_TYPE_FLAG_FINAL, {})

/* The size the pty backend gives: some programs ask, and 0x0 makes them
 * guess. */
#define ROWS 24
#define COLUMNS 80

/* The modes of the session protocol (docs/protocol.md): no echo, no
 * output processing, non-canonical input (VMIN 1), no flow control, no
 * input translation; ISIG kept with ^C as the interrupt. Set on the
 * master: Linux applies a master's termios ioctls to the terminal. */
static gboolean
set_modes (int      fd,
           GError **error)
{
  struct termios modes, wanted;

  if (tcgetattr (fd, &modes) < 0)
    goto fail;

  wanted = modes;
  wanted.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ICANON | IEXTEN);
  wanted.c_lflag |= ISIG;
  wanted.c_oflag &= ~OPOST;
  wanted.c_iflag &= ~(IXON | IXOFF | IXANY | INLCR | IGNCR | ICRNL | ISTRIP | IUCLC);
  wanted.c_cc[VMIN] = 1;
  wanted.c_cc[VTIME] = 0;
  wanted.c_cc[VINTR] = 0x03;

  /* Before every exchange; usually nothing changed, and one read is all
   * it costs. */
  if (wanted.c_lflag == modes.c_lflag && wanted.c_oflag == modes.c_oflag &&
      wanted.c_iflag == modes.c_iflag && wanted.c_cc[VMIN] == modes.c_cc[VMIN] &&
      wanted.c_cc[VTIME] == modes.c_cc[VTIME] && wanted.c_cc[VINTR] == modes.c_cc[VINTR])
    return TRUE;
  if (tcsetattr (fd, TCSANOW, &wanted) < 0)
    goto fail;
  return TRUE;

fail:
  {
    int saved_errno = errno;

    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 "Could not set the terminal's modes: %s", g_strerror (saved_errno));
  }
  return FALSE;
}

static gboolean
terret_flatpak_channel_spawn (TerretShellChannel  *channel,
                              TerretLauncher      *launcher,
                              const char * const  *argv,
                              GError             **error)
{
  struct winsize size = { ROWS, COLUMNS, 0, 0 };
  g_autoptr(TerretProcess) process = NULL;
  char name[128];
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  int slave = -1;

  /* O_NOCTTY: the app must not take this terminal as its own. */
  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0 ||
      ptsname_r (master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    {
      int saved_errno = errno;

      if (master >= 0)
        close (master);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open a pseudo-terminal: %s", g_strerror (saved_errno));
      return FALSE;
    }

  /* In place before bash starts: not even its first prompt is echoed. */
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
terret_flatpak_channel_prepare_run (TerretShellChannel  *channel,
                                    GError             **error)
{
  return set_modes (terret_shell_channel_get_write_fd (channel), error);
}

static void
terret_flatpak_channel_class_init (TerretFlatpakChannelClass *klass)
{
  TerretShellChannelClass *channel_class = TERRET_SHELL_CHANNEL_CLASS (klass);

  channel_class->spawn = terret_flatpak_channel_spawn;
  channel_class->prepare_run = terret_flatpak_channel_prepare_run;
}

static void
terret_flatpak_channel_class_finalize (TerretFlatpakChannelClass *klass)
{
}

static void
terret_flatpak_channel_init (TerretFlatpakChannel *self)
{
}

void
terret_flatpak_channel_register (GTypeModule *module)
{
  terret_flatpak_channel_register_type (module);
}

TerretShellChannel *
terret_flatpak_channel_new (void)
{
  return g_object_new (TERRET_TYPE_FLATPAK_CHANNEL, NULL);
}
