/* terret-container-channel.c: a shell on a terminal made in the container
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
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
 *
 * Without the launcher (launcher=none, or auto's fallback) it carries
 * `ENGINE exec -i -t ... CONTAINER bash ...` instead, the engine's
 * client on a terminal made here: the engine refuses -t without one. The
 * terminal the shell has is the engine's, in the container, in its
 * default modes, which the session sets from inside as over the
 * launcher's.
 */
struct _TerretContainerChannel
{
  TerretShellChannel parent_instance;

  TerretContainerConfig *config; /* (owned) */
  gboolean direct;              /* the shell of this moment is the engine's exec's */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretContainerChannel, terret_container_channel,
                                TERRET_TYPE_SHELL_CHANNEL, G_TYPE_FLAG_FINAL, {})

/* A terminal for the engine's client, raw: the client puts it so itself
 * once it runs, and until then nothing may be echoed or rewritten here.
 * Returns the master, the subsidiary in *subsidiary; -1 with @error. */
static int
open_client_terminal (int     *subsidiary,
                      GError **error)
{
  struct winsize size = { 24, 80, 0, 0 };
  struct termios modes;
  char name[128];
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  int slave = -1;

  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0 ||
      ptsname_r (master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
      tcgetattr (slave, &modes) < 0)
    {
      int saved_errno = errno;

      if (slave >= 0)
        close (slave);
      if (master >= 0)
        close (master);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open a pseudo-terminal for the engine's client: %s",
                   g_strerror (saved_errno));
      return -1;
    }
  cfmakeraw (&modes);
  tcsetattr (slave, TCSANOW, &modes);
  /* The engine gives the container's terminal this size. */
  ioctl (master, TIOCSWINSZ, &size);
  *subsidiary = slave;
  return master;
}

/* The shell through the engine's own exec on a terminal of its own. The
 * launcher holds the shell's environment and directory, which go into
 * the engine's command line; the client runs in the host's. */
static gboolean
spawn_direct (TerretContainerChannel  *self,
              TerretLauncher          *launcher,
              const char * const      *argv,
              GError                 **error)
{
  g_autoptr(TerretProcess) process = NULL;
  g_auto(GStrv) full = terret_container_config_direct_argv (self->config, TRUE,
                                                            terret_launcher_get_environ (launcher),
                                                            terret_launcher_get_cwd (launcher),
                                                            argv);
  g_auto(GStrv) host = g_get_environ ();
  int master, slave;

  master = open_client_terminal (&slave, error);
  if (master < 0)
    return FALSE;
  terret_launcher_set_environ (launcher, (const char * const *)host);
  terret_launcher_set_cwd (launcher, NULL);
  terret_launcher_take_terminal (launcher, slave);
  process = terret_launcher_spawn (launcher, (const char * const *)full, error);
  if (process == NULL)
    {
      close (master);
      return FALSE;
    }
  terret_shell_channel_set_process (TERRET_SHELL_CHANNEL (self), process, master, master);
  self->direct = TRUE;
  return TRUE;
}

static gboolean
terret_container_channel_spawn (TerretShellChannel  *channel,
                                TerretLauncher      *launcher,
                                const char * const  *argv,
                                GError             **error)
{
  TerretContainerChannel *self = TERRET_CONTAINER_CHANNEL (channel);
  g_autoptr(TerretProcess) process = NULL;
  int pair[2];

  self->direct = FALSE;
  if (terret_container_config_is_direct (self->config))
    return spawn_direct (self, launcher, argv, error);

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

/* The engine's client ends with its exec's status, a signal's as 128+N
 * and its own failures as 125 to 127: such a status says nothing sure of
 * the shell's end, and none is invented from it. */
static gboolean
terret_container_channel_get_shell_end (TerretShellChannel *channel,
                                        int                *wait_status)
{
  TerretContainerChannel *self = TERRET_CONTAINER_CHANNEL (channel);
  int status;

  if (!TERRET_SHELL_CHANNEL_CLASS (terret_container_channel_parent_class)->get_shell_end (channel, &status))
    return FALSE;
  if (self->direct && (!WIFEXITED (status) || WEXITSTATUS (status) >= 125))
    return FALSE;
  *wait_status = status;
  return TRUE;
}

static void
terret_container_channel_finalize (GObject *object)
{
  TerretContainerChannel *self = TERRET_CONTAINER_CHANNEL (object);

  g_clear_pointer (&self->config, terret_container_config_unref);

  G_OBJECT_CLASS (terret_container_channel_parent_class)->finalize (object);
}

static void
terret_container_channel_class_init (TerretContainerChannelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = terret_container_channel_finalize;
  TERRET_SHELL_CHANNEL_CLASS (klass)->spawn = terret_container_channel_spawn;
  TERRET_SHELL_CHANNEL_CLASS (klass)->get_shell_end = terret_container_channel_get_shell_end;
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
terret_container_channel_new (TerretContainerConfig *config)
{
  TerretContainerChannel *self = g_object_new (TERRET_TYPE_CONTAINER_CHANNEL, NULL);

  self->config = terret_container_config_ref (config);
  return TERRET_SHELL_CHANNEL (self);
}
