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
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-shell-channel.h"

/**
 * TerretShellChannel:
 *
 * What carries one shell's terminal for a [class@Terret.ShellSession]:
 * a local pseudo-terminal, an `ssh -tt` process, a sandbox's exec
 * stream. The session drives the protocol (handshake, framing, marker,
 * caps, timeouts, restarts); the channel only starts the shell, carries
 * its bytes, says when it has ended and ends it.
 *
 * A subclass implements `spawn`, which starts the process and hands it
 * over with [method@Terret.ShellChannel.set_process]: a pid and the
 * descriptors the shell's output is read from and its input written to
 * (the same descriptor for a pty master). Everything else has a default
 * built on that process: a child watch says when it ended, `waitpid`
 * reaps it, and ending it SIGKILLs the process group it leads, so a
 * channel whose process is a local child (a pty, an `ssh` client) needs
 * nothing more. A subclass that can set the terminal's modes from the
 * host side (termios on a local pty master) implements `prepare_run`.
 *
 * A channel can be spawned again after it was terminated, which is how a
 * session replaces a shell that ended.
 *
 * Since: 0.1
 */

typedef struct
{
  GPid pid;
  int read_fd;
  int write_fd;
  int wait_status;
  guint open : 1;
  guint leads_group : 1;
  /* Only a pipe or a socket raises SIGPIPE; a terminal answers EIO. Known
   * once, so a pty's writes skip the three signal-mask calls. */
  guint write_may_raise_sigpipe : 1;
  /* Written on the thread that watches the process, read by any thread
   * that asks for the pid or kills; hence atomic. */
  gint exited;
} TerretShellChannelPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TerretShellChannel, terret_shell_channel, G_TYPE_OBJECT)

/* --- The exit source -------------------------------------------------- */

/* A source that becomes ready once the channel's process has ended. It
 * wraps the child watch (a child source) so that callers get a plain
 * GSourceFunc whatever the channel uses underneath, and so that the exit
 * status is recorded on the channel (which then knows the pid is reaped
 * and must never be waited for or signalled alone again). */
typedef struct
{
  GSource source;
  TerretShellChannel *channel;  /* (owned) */
} ExitSource;

static gboolean
exit_source_ready (GSource *source)
{
  ExitSource *self = (ExitSource *)source;
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self->channel);

  return g_atomic_int_get (&priv->exited);
}

static gboolean
exit_source_prepare (GSource *source,
                     int     *timeout)
{
  *timeout = -1;
  return exit_source_ready (source);
}

static gboolean
exit_source_dispatch (GSource     *source,
                      GSourceFunc  callback,
                      gpointer     user_data)
{
  if (!exit_source_ready (source))
    return G_SOURCE_CONTINUE;

  if (callback == NULL)
    return G_SOURCE_REMOVE;

  return callback (user_data);
}

static void
exit_source_finalize (GSource *source)
{
  ExitSource *self = (ExitSource *)source;

  g_clear_object (&self->channel);
}

static GSourceFuncs exit_source_funcs = {
  exit_source_prepare,
  exit_source_ready,
  exit_source_dispatch,
  exit_source_finalize,
  NULL, NULL,
};

static void
exit_source_child_exited (GPid     pid,
                          int      wait_status,
                          gpointer user_data)
{
  ExitSource *self = user_data;

  /* GLib has reaped the child; the parent source sees `exited` in its
   * next prepare, in this same context. */
  terret_shell_channel_set_exited (self->channel, wait_status);
  g_source_set_ready_time ((GSource *)self, 0);
}

static GSource *
terret_shell_channel_real_create_exit_source (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  GSource *source = g_source_new (&exit_source_funcs, sizeof (ExitSource));

  ((ExitSource *)source)->channel = g_object_ref (self);
  g_source_set_static_name (source, "[terret] shell exit");

  if (priv->pid > 0 && !g_atomic_int_get (&priv->exited))
    {
      g_autoptr(GSource) watch = g_child_watch_source_new (priv->pid);

      g_source_set_callback (watch, G_SOURCE_FUNC (exit_source_child_exited),
                             source, NULL);
      g_source_add_child_source (source, watch);
    }

  return source;
}

/* --- Default implementations ------------------------------------------ */

static gboolean
terret_shell_channel_real_check_exited (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  int wait_status = 0;
  pid_t ret;

  if (g_atomic_int_get (&priv->exited) || priv->pid <= 0)
    return TRUE;

  do
    ret = waitpid (priv->pid, &wait_status, WNOHANG);
  while (ret < 0 && errno == EINTR);

  if (ret == 0)
    return FALSE;

  /* ECHILD: someone else reaped it; either way it is gone. */
  terret_shell_channel_set_exited (self, ret > 0 ? wait_status : 0);
  return TRUE;
}

static void
terret_shell_channel_real_kill (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  if (priv->pid <= 0)
    return;

  /* The group, not just the leader: a background job is not the shell's
   * business once started, and would otherwise survive it. The group id
   * stays allocated while any member lives, so even after the leader was
   * reaped it cannot name anybody else's processes; ESRCH (nobody left)
   * and EPERM (only zombies, or a setuid member no signal of ours could
   * end) both mean there is nothing more to do. */
  if (priv->leads_group)
    kill (-priv->pid, SIGKILL);
  else if (!g_atomic_int_get (&priv->exited))
    kill (priv->pid, SIGKILL);
}

static void
terret_shell_channel_real_terminate (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  /* Signalled before the descriptors close and before the reap: until it
   * is reaped the pid is still ours and cannot have been recycled. */
  terret_shell_channel_kill (self);

  if (priv->read_fd >= 0)
    g_close (priv->read_fd, NULL);
  if (priv->write_fd >= 0 && priv->write_fd != priv->read_fd)
    g_close (priv->write_fd, NULL);
  priv->read_fd = -1;
  priv->write_fd = -1;

  if (priv->pid > 0 && !g_atomic_int_get (&priv->exited))
    {
      int wait_status = 0;
      pid_t ret;

      /* SIGKILL cannot be caught or ignored, so this wait is short. */
      do
        ret = waitpid (priv->pid, &wait_status, 0);
      while (ret < 0 && errno == EINTR);

      terret_shell_channel_set_exited (self, ret > 0 ? wait_status : 0);
    }
}

/* --- GObject ---------------------------------------------------------- */

static void
terret_shell_channel_dispose (GObject *object)
{
  TerretShellChannel *self = (TerretShellChannel *)object;
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  /* Dropping the last reference to a live shell must not leak it. */
  if (priv->open)
    terret_shell_channel_terminate (self);

  G_OBJECT_CLASS (terret_shell_channel_parent_class)->dispose (object);
}

static void
terret_shell_channel_class_init (TerretShellChannelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_shell_channel_dispose;

  klass->create_exit_source = terret_shell_channel_real_create_exit_source;
  klass->check_exited = terret_shell_channel_real_check_exited;
  klass->kill = terret_shell_channel_real_kill;
  klass->terminate = terret_shell_channel_real_terminate;
}

static void
terret_shell_channel_init (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  priv->read_fd = -1;
  priv->write_fd = -1;
}

/* --- Public API ------------------------------------------------------- */

/**
 * terret_shell_channel_spawn:
 * @self: a channel that is not open
 * @argv: (array zero-terminated=1): the shell's argument vector;
 *   `argv[0]` is a path or a name looked up in `PATH`
 * @envp: (array zero-terminated=1): the shell's whole environment
 * @cwd: (nullable) (type filename): the shell's working directory, or
 *   %NULL for the host's
 * @error: return location for a #GError
 *
 * Starts the shell. On success the channel is open: its descriptors can
 * be read and written, and [method@Terret.ShellChannel.terminate] must
 * eventually end it (disposing the channel does too).
 *
 * Returns: %TRUE when the shell was started
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_spawn (TerretShellChannel  *self,
                            const char * const  *argv,
                            const char * const  *envp,
                            const char          *cwd,
                            GError             **error)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  TerretShellChannelClass *klass;

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);
  g_return_val_if_fail (envp != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_return_val_if_fail (!priv->open, FALSE);

  klass = TERRET_SHELL_CHANNEL_GET_CLASS (self);
  if (klass->spawn == NULL)
    g_error ("%s does not implement TerretShellChannel.spawn", G_OBJECT_TYPE_NAME (self));

  if (!klass->spawn (self, argv, envp, cwd, error))
    return FALSE;

  if (!priv->open)
    g_error ("%s.spawn did not call terret_shell_channel_set_process()",
             G_OBJECT_TYPE_NAME (self));

  return TRUE;
}

/**
 * terret_shell_channel_can_prepare_run:
 * @self: a channel
 *
 * Tells whether the channel implements `prepare_run`.
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

  return TERRET_SHELL_CHANNEL_GET_CLASS (self)->prepare_run != NULL;
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
    return TRUE;

  return klass->prepare_run (self, error);
}

/**
 * terret_shell_channel_create_exit_source:
 * @self: an open channel
 *
 * Creates a source that dispatches once the shell has ended. Set its
 * callback with g_source_set_callback() (a #GSourceFunc) and attach it
 * to the context the caller runs on. It holds no timer: it wakes nobody
 * until the shell actually ends.
 *
 * Returns: (transfer full): a new source
 *
 * Since: 0.1
 */
GSource *
terret_shell_channel_create_exit_source (TerretShellChannel *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), NULL);

  return TERRET_SHELL_CHANNEL_GET_CLASS (self)->create_exit_source (self);
}

/**
 * terret_shell_channel_check_exited:
 * @self: a channel
 *
 * Finds out, without blocking, whether the shell has ended. Must not be
 * called while a source from
 * [method@Terret.ShellChannel.create_exit_source] is attached.
 *
 * Returns: %TRUE when the shell has ended (or was never started)
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_check_exited (TerretShellChannel *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), TRUE);

  return TERRET_SHELL_CHANNEL_GET_CLASS (self)->check_exited (self);
}

/**
 * terret_shell_channel_kill:
 * @self: a channel
 *
 * Makes the shell and everything it started end now. Nothing is closed
 * or reaped, so this is safe from any thread, including while another
 * thread is reading the channel; the reader then sees the end.
 *
 * Since: 0.1
 */
void
terret_shell_channel_kill (TerretShellChannel *self)
{
  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));

  TERRET_SHELL_CHANNEL_GET_CLASS (self)->kill (self);
}

/**
 * terret_shell_channel_terminate:
 * @self: a channel
 *
 * Ends the shell and everything it started, closes the channel's
 * descriptors and reaps the process. The channel can then be spawned
 * again. Does nothing on a channel that is not open.
 *
 * Since: 0.1
 */
void
terret_shell_channel_terminate (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));

  if (!priv->open)
    return;

  TERRET_SHELL_CHANNEL_GET_CLASS (self)->terminate (self);

  priv->open = FALSE;
  priv->pid = 0;
  priv->read_fd = -1;
  priv->write_fd = -1;
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

  return priv->open;
}

/**
 * terret_shell_channel_get_pid:
 * @self: a channel
 *
 * Gets the local process that carries the shell.
 *
 * Returns: the local process carrying the shell, or 0 when the channel is
 *   not open or its process has ended
 *
 * Since: 0.1
 */
GPid
terret_shell_channel_get_pid (TerretShellChannel *self)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), 0);

  if (!priv->open || g_atomic_int_get (&priv->exited))
    return 0;

  return priv->pid;
}

/**
 * terret_shell_channel_get_exited:
 * @self: a channel
 * @wait_status: (out) (optional): the wait status the process ended with
 *
 * Tells whether the channel's process has been seen to end, and how.
 *
 * Returns: whether the channel's process is known to have ended
 *
 * Since: 0.1
 */
gboolean
terret_shell_channel_get_exited (TerretShellChannel *self,
                                 int                *wait_status)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (self), FALSE);

  if (!g_atomic_int_get (&priv->exited))
    return FALSE;

  if (wait_status != NULL)
    *wait_status = priv->wait_status;
  return TRUE;
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
 * @pid: the local process that carries the shell
 * @read_fd: the descriptor its output is read from (the channel takes it)
 * @write_fd: the descriptor its input is written to (the channel takes it); may
 *   be @read_fd
 *
 * For implementations of `spawn`: hands the started process over. The
 * channel owns the descriptors from now on and makes them non-blocking
 * and close-on-exec. Whether @pid leads its own process group is noted
 * here, so a channel whose process called setsid() (or setpgid()) before
 * exec has its whole group ended by the default `kill` and `terminate`.
 *
 * Since: 0.1
 */
void
terret_shell_channel_set_process (TerretShellChannel *self,
                                  GPid                pid,
                                  int                 read_fd,
                                  int                 write_fd)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);
  GError *error = NULL;
  struct stat st;

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));
  g_return_if_fail (pid > 0);
  g_return_if_fail (read_fd >= 0 && write_fd >= 0);
  g_return_if_fail (!priv->open);

  if (!g_unix_set_fd_nonblocking (read_fd, TRUE, &error) ||
      (write_fd != read_fd && !g_unix_set_fd_nonblocking (write_fd, TRUE, &error)))
    {
      g_warning ("Could not make the shell's descriptors non-blocking: %s", error->message);
      g_clear_error (&error);
    }
  fcntl (read_fd, F_SETFD, FD_CLOEXEC);
  fcntl (write_fd, F_SETFD, FD_CLOEXEC);

  priv->write_may_raise_sigpipe = fstat (write_fd, &st) < 0 || S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode);
  priv->pid = pid;
  priv->read_fd = read_fd;
  priv->write_fd = write_fd;
  priv->wait_status = 0;
  priv->leads_group = getpgid (pid) == pid;
  g_atomic_int_set (&priv->exited, FALSE);
  priv->open = TRUE;
}

/**
 * terret_shell_channel_set_exited:
 * @self: a channel
 * @wait_status: the process's wait status
 *
 * For implementations: records that the channel's process has ended and
 * was reaped, so nothing waits for it or signals it alone again.
 *
 * Since: 0.1
 */
void
terret_shell_channel_set_exited (TerretShellChannel *self,
                                 int                 wait_status)
{
  TerretShellChannelPrivate *priv = terret_shell_channel_get_instance_private (self);

  g_return_if_fail (TERRET_IS_SHELL_CHANNEL (self));

  priv->wait_status = wait_status;
  g_atomic_int_set (&priv->exited, TRUE);
}
