/* terret-shell-channel.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-error.h"
#include "terret-process-private.h"
#include "terret-shell-channel-private.h"

/**
 * TerretShellChannel:
 *
 * What carries one shell's terminal for a session of a
 * [class@Terret.SessionExecutor]: a local pseudo-terminal, an `ssh -tt`
 * client, a container engine's exec stream. The session drives the
 * protocol (handshake, framing, marker, caps, timeouts, restarts); the
 * channel only starts the shell's process, carries its bytes, and ends
 * it.
 *
 * A subclass implements `spawn`: it starts the process through the
 * [class@Terret.Launcher] it is handed, which runs it contained under the
 * executor's launcher process, and hands it over with
 * [method@Terret.ShellChannel.set_process] together with the descriptors
 * the shell's output is read from and its input written to (the same
 * descriptor for a pty master). Ending it ([method@Terret.ShellChannel.kill],
 * [method@Terret.ShellChannel.terminate]) ends everything the shell
 * started, whatever session or process group it moved to. A subclass
 * that can set the terminal's modes from the host side (termios on a
 * local pty master) implements `prepare_run`.
 *
 * A channel can be spawned again after it was terminated, which is how a
 * session replaces a shell that ended.
 *
 * Since: 0.1
 */

typedef struct
{
  TerretProcess *process;       /* (owned) (nullable) */
  int read_fd;
  int write_fd;
  /* Only a pipe or a socket raises SIGPIPE; a terminal answers EIO. Known
   * once, so a pty's writes skip the three signal-mask calls. */
  guint write_may_raise_sigpipe : 1;
} TerretShellChannelPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TerretShellChannel, terret_shell_channel, G_TYPE_OBJECT)

static void
terret_shell_channel_real_terminate (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  /* Killed before the descriptors close: a shell stuck writing to a full
   * terminal must not wait on a reader that is gone. */
  if (priv->process != NULL)
    terret_process_kill (priv->process);

  if (priv->read_fd >= 0)
    g_close (priv->read_fd, NULL);
  if (priv->write_fd >= 0 && priv->write_fd != priv->read_fd)
    g_close (priv->write_fd, NULL);
  priv->read_fd = -1;
  priv->write_fd = -1;

  if (priv->process != NULL)
    terret_process_terminate (priv->process);
}

static gboolean
terret_shell_channel_real_get_shell_end (TerretShellChannel *self,
                                         int                *wait_status)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  return priv->process != NULL && terret_process_get_exited (priv->process, wait_status);
}

static void
terret_shell_channel_dispose (GObject *object)
{
  TerretShellChannel *self = (TerretShellChannel *)object;

  /* Dropping the last reference to a live shell must not leak it. */
  terret_shell_channel_terminate (self);

  G_OBJECT_CLASS (terret_shell_channel_parent_class)->dispose (object);
}

static void
terret_shell_channel_class_init (TerretShellChannelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_shell_channel_dispose;

  klass->terminate = terret_shell_channel_real_terminate;
  klass->get_shell_end = terret_shell_channel_real_get_shell_end;
}

static void
terret_shell_channel_init (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  priv->read_fd = -1;
  priv->write_fd = -1;
}

/* --- Public ----------------------------------------------------------- */

/**
 * terret_shell_channel_spawn:
 * @self: a channel that is not open
 * @launcher: what the shell starts with: its environment and working
 *   directory
 * @argv: (array zero-terminated=1): the shell's argument vector
 * @error: return location for a #GError
 *
 * Starts the shell. On success the channel is open: its descriptors can
 * be read and written, and [method@Terret.ShellChannel.terminate] must
 * eventually end it (disposing the channel does too).
 *
 * Returns: %TRUE when the shell was started
 *
 * Since: 0.2
 */
gboolean
terret_shell_channel_spawn (TerretShellChannel  *self,
                            TerretLauncher      *launcher,
                            const char * const  *argv,
                            GError             **error)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  TerretShellChannelClass *klass;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);
  g_return_val_if_fail (TERRET_IS_LAUNCHER (launcher), FALSE);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (priv->process == NULL, FALSE);

  klass = TERRET_SHELL_CHANNEL_GET_CLASS (self);
  if (klass->spawn == NULL)
    g_error ("%s does not implement TerretShellChannel.spawn", G_OBJECT_TYPE_NAME (self));

  if (!klass->spawn (self, launcher, argv, error))
    return FALSE;

  if (priv->process == NULL)
    g_error ("%s.spawn did not call terret_shell_channel_set_process()",
             G_OBJECT_TYPE_NAME (self));

  return TRUE;
}

/**
 * terret_shell_channel_can_prepare_run:
 * @self: a channel
 *
 * Tells whether the channel implements `prepare_run`, or carries a
 * terminal a far launcher made (see [class@Terret.FarSide]), which sets
 * its modes when asked.
 *
 * Returns: whether the channel sets the terminal's modes itself before
 *   every exchange
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_can_prepare_run (TerretShellChannel *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);

  return _terret_shell_channel_get_reach (self) != TERRET_SHELL_BEHIND_CLIENT;
}

/*
 * _terret_shell_channel_get_reach:
 *
 * Where the channel's shell runs: under a far launcher, here (a channel
 * that sets its terminal's modes itself holds the shell's own terminal),
 * or behind a client the unit holds.
 */
TerretShellReach
_terret_shell_channel_get_reach (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  if (priv->process != NULL && _terret_process_is_far (priv->process))
    return TERRET_SHELL_FAR;
  if (TERRET_SHELL_CHANNEL_GET_CLASS (self)->prepare_run != NULL)
    return TERRET_SHELL_HERE;
  return TERRET_SHELL_BEHIND_CLIENT;
}

/**
 * terret_shell_channel_prepare_run:
 * @self: an open channel
 * @error: return location for a #GError
 *
 * Re-asserts the terminal modes the protocol relies on, so that whatever
 * the previous command did to its terminal (`stty echo`) cannot corrupt
 * the next exchange. Does nothing for a channel that cannot.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_prepare_run (TerretShellChannel  *self,
                                  GError             **error)
{
  TerretShellChannelClass *klass;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  klass = TERRET_SHELL_CHANNEL_GET_CLASS (self);
  if (klass->prepare_run == NULL)
    {
      TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

      /* A far launcher made the terminal, and keeps its master: it sets
       * the modes there, on the way of the bytes that follow. */
      if (_terret_shell_channel_get_reach (self) == TERRET_SHELL_FAR)
        _terret_process_reset_terminal (priv->process);
      return TRUE;
    }

  return klass->prepare_run (self, error);
}

/**
 * terret_shell_channel_kill:
 * @self: a channel
 *
 * Makes the shell and everything it started end now. Nothing is closed,
 * so this is safe from any thread, including while another thread reads
 * the channel; the reader then sees the end.
 *
 * Since: 0.1
 */
void
terret_shell_channel_kill (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));

  if (priv->process != NULL)
    terret_process_kill (priv->process);
}

/**
 * terret_shell_channel_terminate:
 * @self: a channel
 *
 * Ends the shell and everything it started, closes the channel's
 * descriptors and waits until nothing of it is left. The channel can then
 * be spawned again. Does nothing on a channel that is not open.
 *
 * Since: 0.1
 */
void
terret_shell_channel_terminate (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));

  if (priv->process == NULL)
    return;

  TERRET_SHELL_CHANNEL_GET_CLASS (self)->terminate (self);

  g_clear_object (&priv->process);
  priv->read_fd = -1;
  priv->write_fd = -1;
}

/**
 * terret_shell_channel_get_shell_end:
 * @self: a channel whose process ended
 * @wait_status: (out): the shell's wait status, as waitpid() gives it
 *
 * Tells how the shell ended, when the channel can tell.
 *
 * Returns: whether @wait_status says how the shell ended
 *
 * Since: 0.2
 */
gboolean
terret_shell_channel_get_shell_end (TerretShellChannel *self,
                                    int                *wait_status)
{
  int status = 0;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);

  if (!TERRET_SHELL_CHANNEL_GET_CLASS (self)->get_shell_end (self, &status))
    return FALSE;
  if (wait_status != NULL)
    *wait_status = status;
  return TRUE;
}

/**
 * terret_shell_channel_is_open:
 * @self: a channel
 *
 * Tells whether the channel holds a spawned shell.
 *
 * Returns: whether the channel was spawned and not yet terminated (its
 *   shell may have ended meanwhile)
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_is_open (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);

  return priv->process != NULL;
}

/**
 * terret_shell_channel_get_process:
 * @self: a channel
 *
 * Gets the process that carries the shell.
 *
 * Returns: (transfer none) (nullable): the process, or %NULL when the
 *   channel is not open
 *
 * Since: 0.2
 */
TerretProcess *
terret_shell_channel_get_process (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), NULL);

  return priv->process;
}

/**
 * terret_shell_channel_get_read_fd:
 * @self: an open channel
 *
 * Gets the descriptor the shell's output is read from.
 *
 * Returns: the non-blocking descriptor the shell's output is read from,
 *   or -1
 *
 * Since: 0.1
 */
int
terret_shell_channel_get_read_fd (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), -1);

  return priv->read_fd;
}

/**
 * terret_shell_channel_get_write_fd:
 * @self: an open channel
 *
 * Gets the descriptor the shell's input is written to.
 *
 * Returns: the non-blocking descriptor the shell's input is written to
 *   (the same as the read descriptor for a pty), or -1
 *
 * Since: 0.1
 */
int
terret_shell_channel_get_write_fd (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), -1);

  return priv->write_fd;
}

/**
 * terret_shell_channel_read:
 * @self: an open channel
 * @buffer: (out caller-allocates) (array length=size): where to read to
 * @size: the size of @buffer
 * @error: return location for a #GError
 *
 * Reads what the shell's terminal has carried, without blocking.
 *
 * The end of the stream is 0, and so is `EIO`: it is what a pty master
 * answers once no process holds the terminal any more.
 *
 * Returns: the number of bytes read, 0 at the end of the stream, or -1
 *   with @error set (%G_IO_ERROR_WOULD_BLOCK when nothing is there yet)
 *
 * Since: 0.1
 */
gssize
terret_shell_channel_read (TerretShellChannel  *self,
                           guint8              *buffer,
                           gsize                size,
                           GError             **error)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  gssize n;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), -1);
  g_return_val_if_fail (buffer != NULL, -1);

  if (priv->read_fd < 0)
    return 0;

  do
    n = read (priv->read_fd, buffer, size);
  while (n < 0 && errno == EINTR);

  if (n >= 0)
    return n;

  if (errno == EIO)
    return 0;

  {
    int saved_errno = errno;

    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 "Could not read from the shell: %s", g_strerror (saved_errno));
  }
  return -1;
}

/**
 * terret_shell_channel_write:
 * @self: an open channel
 * @data: (array length=len): the bytes to write
 * @len: how many
 * @error: return location for a #GError
 *
 * Writes to the shell's terminal without blocking.
 *
 * A channel whose reader is gone answers `EIO` (a pty) or `EPIPE` (a
 * pipe); both are reported as %G_IO_ERROR_BROKEN_PIPE, which is how a
 * session learns that its shell ended. `SIGPIPE` is blocked around the
 * write and a signal it raised is consumed, so a pipe whose reader died
 * can never kill the host.
 *
 * Returns: the number of bytes written, or -1 with @error set
 *   (%G_IO_ERROR_WOULD_BLOCK when the terminal is full)
 *
 * Since: 0.1
 */
gssize
terret_shell_channel_write (TerretShellChannel  *self,
                            const guint8        *data,
                            gsize                len,
                            GError             **error)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  sigset_t pipe_set, old_set, pending;
  gboolean was_pending;
  gssize n;
  int saved_errno;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), -1);
  g_return_val_if_fail (data != NULL || len == 0, -1);

  if (priv->write_fd < 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE,
                           "The shell's terminal is closed");
      return -1;
    }

  if (!priv->write_may_raise_sigpipe)
    {
      do
        n = write (priv->write_fd, data, len);
      while (n < 0 && errno == EINTR);
      saved_errno = errno;
      goto done;
    }

  /* Blocking SIGPIPE for this thread only, then consuming the one this
   * write raised (and only if it was not already pending for some other
   * reason): the host's own disposition is never touched. */
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigemptyset (&pending);
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old_set);
  sigpending (&pending);
  was_pending = sigismember (&pending, SIGPIPE);

  do
    n = write (priv->write_fd, data, len);
  while (n < 0 && errno == EINTR);
  saved_errno = errno;

  if (n < 0 && saved_errno == EPIPE && !was_pending)
    {
      static const struct timespec zero = { 0, 0 };

      while (sigtimedwait (&pipe_set, NULL, &zero) < 0 && errno == EINTR)
        ;
    }
  pthread_sigmask (SIG_SETMASK, &old_set, NULL);

done:
  if (n >= 0)
    return n;

  if (saved_errno == EIO || saved_errno == EPIPE)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE,
                 "The shell's terminal is gone: %s", g_strerror (saved_errno));
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 "Could not write to the shell: %s", g_strerror (saved_errno));
  return -1;
}

/**
 * terret_shell_channel_set_process:
 * @self: a channel being spawned
 * @process: (transfer none): the process that carries the shell
 * @read_fd: the descriptor its output is read from (the channel takes it)
 * @write_fd: the descriptor its input is written to (the channel takes
 *   it); may be @read_fd
 *
 * For implementations of `spawn`: hands the started process over. The
 * channel owns the descriptors from now on and makes them non-blocking
 * and close-on-exec.
 *
 * Since: 0.2
 */
void
terret_shell_channel_set_process (TerretShellChannel *self,
                                  TerretProcess      *process,
                                  int                 read_fd,
                                  int                 write_fd)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  GError *error = NULL;
  struct stat st;

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));
  g_return_if_fail (TERRET_IS_PROCESS (process));
  g_return_if_fail (read_fd >= 0 && write_fd >= 0);
  g_return_if_fail (priv->process == NULL);

  if (!g_unix_set_fd_nonblocking (read_fd, TRUE, &error) ||
      (write_fd != read_fd && !g_unix_set_fd_nonblocking (write_fd, TRUE, &error)))
    {
      g_warning ("Could not make the shell's descriptors non-blocking: %s", error->message);
      g_clear_error (&error);
    }
  fcntl (read_fd, F_SETFD, FD_CLOEXEC);
  fcntl (write_fd, F_SETFD, FD_CLOEXEC);

  priv->write_may_raise_sigpipe = fstat (write_fd, &st) < 0 || S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode);
  priv->process = g_object_ref (process);
  priv->read_fd = read_fd;
  priv->write_fd = write_fd;
}
