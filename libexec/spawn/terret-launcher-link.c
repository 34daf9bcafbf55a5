/* terret-launcher-link.c: the library's side of one launcher process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A link starts a launcher (libexec/spawn/launcher/) once, with
 * posix_spawn, and hands it spawn requests over a SOCK_SEQPACKET socket.
 * posix_spawn because it never copies the host (glibc uses CLONE_VM and
 * CLONE_VFORK): the one process the host ever starts itself costs the
 * same in a small host and in one holding gigabytes, and every process
 * after that is forked from the launcher, which is small.
 *
 * Each executor has one, so its sessions' processes are contained apart
 * from another executor's; terret_launcher_new() without an executor
 * shares a process-wide one.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>


#include "terret-launcher-wire.h"
#include "terret-error.h"
#include "terret-far-side-private.h"
#include "terret-launcher-link-private.h"
#include "terret-launcher-program-private.h"

struct _TerretLauncherLink
{
  gatomicrefcount ref_count;

  /* Spawns may come from any thread; requests and replies pair up on
   * the socket, so one conversation at a time. */
  GMutex mutex;
  int socket;                   /* -1 until started */
  GPid pid;
  GStrv wrapper;                /* (owned) (nullable) what the launcher runs under */
  GBytes *filter;               /* (owned) (nullable) the seccomp filter the wrapper loads */
  TerretFarSide *far;           /* (owned) (nullable) where its processes run, through a bridge */
};

TerretLauncherLink *
_terret_launcher_link_new (void)
{
  return _terret_launcher_link_new_wrapped (NULL, NULL);
}

/*
 * _terret_launcher_link_new_wrapped:
 * @wrapper: (nullable): a bwrap command line the launcher runs under, up
 *   to and including its `--`
 * @filter: (nullable): a seccomp BPF program for bwrap's --seccomp
 *
 * A link whose launcher, and so everything it starts, runs inside
 * @wrapper. The wrapper must pass descriptor 3 (the socket) through.
 */
TerretLauncherLink *
_terret_launcher_link_new_wrapped (const char * const *wrapper,
                                   GBytes             *filter)
{
  TerretLauncherLink *self = g_new0 (TerretLauncherLink, 1);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->mutex);
  self->socket = -1;
  self->wrapper = g_strdupv ((char **)wrapper);
  self->filter = filter != NULL ? g_bytes_ref (filter) : NULL;
  return self;
}

/*
 * _terret_launcher_link_new_far:
 * @far: where the processes run
 *
 * A link whose launcher is a bridge (terret-launcher-bridge.c) to a
 * launcher on @far.
 */
TerretLauncherLink *
_terret_launcher_link_new_far (TerretFarSide *far)
{
  TerretLauncherLink *self = _terret_launcher_link_new_wrapped (NULL, NULL);

  self->far = g_object_ref (far);
  return self;
}

/* Whether the link's processes run on a far side: their programs, paths
 * and environment are the far side's. */
gboolean
_terret_launcher_link_is_far (TerretLauncherLink *self)
{
  return self->far != NULL;
}

TerretLauncherLink *
_terret_launcher_link_ref (TerretLauncherLink *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/* Closing the socket is the launcher's cue to leave; it has nothing to
 * finish (units end on their own sockets), so the wait is short. */
static void
link_stop (TerretLauncherLink *self)
{
  if (self->socket >= 0)
    {
      close (self->socket);
      self->socket = -1;
    }
  if (self->pid > 0)
    {
      /* A sandbox's bwrap is not ours to trust with leaving: killed, it
       * takes its namespace with it (--die-with-parent), so no reaper of
       * its own lingers. The launcher itself leaves on the EOF. */
      if (self->wrapper != NULL)
        kill (self->pid, SIGKILL);
      /* A bridge leaves once its far side has: a disposable container is
       * gone, not only told to go, when this returns. */
      while (waitpid (self->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      self->pid = 0;
    }
}

void
_terret_launcher_link_unref (TerretLauncherLink *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  link_stop (self);
  g_mutex_clear (&self->mutex);
  g_strfreev (self->wrapper);
  g_clear_pointer (&self->filter, g_bytes_unref);
  g_clear_object (&self->far);
  g_free (self);
}

/* The link terret_launcher_new() uses: one per process, never
 * stopped, so a launcher made for a short-lived helper costs one
 * launcher process however many there are. */
TerretLauncherLink *
_terret_launcher_link_get_default (void)
{
  static gsize shared;

  if (g_once_init_enter (&shared))
    g_once_init_leave (&shared, (gsize)_terret_launcher_link_new ());

  return (TerretLauncherLink *)shared;
}

/* What a wrapper printed before it failed, for the error. */
static char *
read_said (int fd)
{
  char buffer[4096];
  ssize_t n = pread (fd, buffer, sizeof buffer - 1, 0);

  if (n <= 0)
    return g_strdup ("");
  buffer[n] = '\0';
  return g_strstrip (g_utf8_make_valid (buffer, n));
}

/* A memfd holding @bytes, from its start; -1 with errno set. */
static int
memfd_with (const char *name,
            GBytes     *bytes)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  int fd = memfd_create (name, MFD_CLOEXEC);

  if (fd < 0)
    return -1;
  if (write (fd, data, size) != (ssize_t)size || lseek (fd, 0, SEEK_SET) != 0)
    {
      int saved_errno = errno != 0 ? errno : EIO;

      close (fd);
      errno = saved_errno;
      return -1;
    }
  return fd;
}

/* Waits for the launcher's hello, the proof that it runs (inside its
 * sandbox, when there is one). bwrap's --info-fd is no such proof: bwrap
 * writes it before its child has finished setting up, and a sandbox that
 * fails there would look up until the first request found it gone. */
static gboolean
wait_hello (TerretLauncherLink  *self,
            int                  said_fd,
            GError             **error)
{
  struct pollfd pfd = { self->socket, POLLIN, 0 };
  TerretWireHello hello = { 0 };
  ssize_t n = -1;
  int ret;

  do
    ret = poll (&pfd, 1, 30 * 1000);
  while (ret < 0 && errno == EINTR);
  if (ret > 0)
    do
      n = recv (self->socket, &hello, sizeof hello, 0);
    while (n < 0 && errno == EINTR);

  if (n == sizeof hello && hello.magic == TERRET_WIRE_HELLO_MAGIC)
    {
      if (self->filter == NULL || hello.seccomp == 2)
        return TRUE;
      /* Never a weaker sandbox than asked for. */
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not set up the sandbox: its seccomp filter is not in force in the "
                   "launcher (seccomp mode %d)", hello.seccomp);
      return FALSE;
    }

  if (ret == 0)
    kill (self->pid, SIGKILL);
  if (self->wrapper == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The launcher %s %s before it was ready", _terret_launcher_program (),
                   ret == 0 ? "did not answer in 30 s" : "ended");
      return FALSE;
    }

  {
    g_autofree char *said = NULL;

    /* Its words are all written once it has gone: wait for that (a
     * wrapper that hangs was killed above). */
    while (waitpid (self->pid, NULL, 0) < 0 && errno == EINTR)
      ;
    self->pid = 0;
    said = read_said (said_fd);
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                 "Could not set up the sandbox (%s): %s", self->wrapper[0],
                 *said != '\0' ? said
                 : ret == 0 ? "it did not start the launcher in 30 s"
                 : "it ended without a word");
  }
  return FALSE;
}

/* Has the backend start the far side's launcher with one end of a socket
 * pair (terret_far_side_new_for_socket()) and waits for its hello: the
 * local wire from then on, descriptors and all. It is no child of ours:
 * the end of the socket is all that ends it (link_stop()). */
static gboolean
link_start_socket (TerretLauncherLink  *self,
                   GError             **error)
{
  static const char * const argv[] = { "--socket", "3", "--far-requests", NULL };
  double timeout = _terret_far_side_get_timeout (self->far);
  struct pollfd pfd = { -1, POLLIN, 0 };
  TerretWireHello hello = { 0 };
  ssize_t n = -1;
  int pair[2];
  int said;
  int ret;

  said = memfd_create ("terret-far-said", MFD_CLOEXEC);
  if (said < 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      int saved_errno = errno;

      if (said >= 0)
        close (said);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not reach %s: %s", _terret_far_side_get_name (self->far),
                   g_strerror (saved_errno));
      return FALSE;
    }

  if (!_terret_far_side_start (self->far, argv, pair[1], said, error))
    {
      close (pair[0]);
      close (pair[1]);
      close (said);
      return FALSE;
    }
  /* Only the launcher may hold its end: its EOF is the launcher's end. */
  close (pair[1]);
  self->socket = pair[0];

  pfd.fd = self->socket;
  do
    ret = poll (&pfd, 1, (int)(timeout * 1000));
  while (ret < 0 && errno == EINTR);
  if (ret > 0)
    do
      n = recv (self->socket, &hello, sizeof hello, 0);
    while (n < 0 && errno == EINTR);

  if (n == sizeof hello && hello.magic == TERRET_WIRE_HELLO_MAGIC)
    {
      close (said);
      return TRUE;
    }

  /* Closed, a launcher that hangs leaves as on the host's end. */
  close (self->socket);
  self->socket = -1;
  {
    g_autofree char *words = read_said (said);

    close (said);
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                 "Could not reach %s: %s", _terret_far_side_get_name (self->far),
                 *words != '\0' ? words
                 : ret == 0 ? "its launcher did not answer in time"
                 : "its launcher ended before it was ready");
  }
  return FALSE;
}

/* Starts a bridge to the far side and waits for its hello, which it says
 * once the far launcher has said its own: until then what went wrong is
 * in the words it left in @said (the engine's own). */
static gboolean
link_start_far (TerretLauncherLink  *self,
                GError             **error)
{
  const char *program = _terret_launcher_program ();
  const char * const *far = _terret_far_side_get_argv (self->far);
  const char * const *install = _terret_far_side_get_install (self->far);
  const char * const *probe = _terret_far_side_get_probe (self->far);
  double timeout = _terret_far_side_get_timeout (self->far);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  struct pollfd pfd = { -1, POLLIN, 0 };
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  TerretWireHello hello = { 0 };
  sigset_t all, none;
  int pair[2];
  int said;
  int status = 0;
  pid_t pid;
  ssize_t n = -1;
  int ret;

  g_ptr_array_add (argv, g_strdup ("terret-launcher"));
  g_ptr_array_add (argv, g_strdup ("--socket"));
  g_ptr_array_add (argv, g_strdup ("3"));
  g_ptr_array_add (argv, g_strdup ("--bridge"));
  g_ptr_array_add (argv, g_strdup ("--timeout"));
  g_ptr_array_add (argv, g_strdup_printf ("%.3f", timeout));
  if (install != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--install"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", g_strv_length ((char **)install)));
      for (guint i = 0; install[i] != NULL; i++)
        g_ptr_array_add (argv, g_strdup (install[i]));
    }
  if (probe != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--probe"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", g_strv_length ((char **)probe)));
      for (guint i = 0; probe[i] != NULL; i++)
        g_ptr_array_add (argv, g_strdup (probe[i]));
    }
  g_ptr_array_add (argv, g_strdup ("--far"));
  g_ptr_array_add (argv, g_strdup_printf ("%u", g_strv_length ((char **)far)));
  for (guint i = 0; far[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (far[i]));
  g_ptr_array_add (argv, NULL);

  said = memfd_create ("terret-far-said", MFD_CLOEXEC);
  if (said < 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      int saved_errno = errno;

      if (said >= 0)
        close (said);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not reach %s: %s", _terret_far_side_get_name (self->far),
                   g_strerror (saved_errno));
      return FALSE;
    }

  sigfillset (&all);
  sigemptyset (&none);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
                                   POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawn_file_actions_init (&actions);
  /* Not the host's stdin: the engine's client is given its own. */
  posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, said, 1);
  posix_spawn_file_actions_adddup2 (&actions, said, 2);
  posix_spawn_file_actions_adddup2 (&actions, pair[1], 3);
  posix_spawn_file_actions_addclosefrom_np (&actions, 4);
  /* The host's environment: the engine's client needs its PATH, HOME,
   * DOCKER_HOST, KUBECONFIG; nothing of it reaches the far side's
   * processes, whose environment is the far side's own. */
  ret = posix_spawn (&pid, program, &actions, &attr, (char **)argv->pdata, environ);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  close (pair[1]);

  if (ret != 0)
    {
      close (pair[0]);
      close (said);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not start the launcher %s: %s%s", program, g_strerror (ret),
                   ret == ENOENT ? " (is terret-exec installed completely? set "
                                   TERRET_LAUNCHER_ENV " to use another one)" : "");
      return FALSE;
    }
  self->socket = pair[0];
  self->pid = pid;

  /* The bridge bounds its own wait for the far side; this one only
   * covers a bridge that hangs itself. */
  pfd.fd = self->socket;
  do
    ret = poll (&pfd, 1, (int)(timeout * 1000) + 10 * 1000);
  while (ret < 0 && errno == EINTR);
  if (ret > 0)
    do
      n = recv (self->socket, &hello, sizeof hello, 0);
    while (n < 0 && errno == EINTR);

  if (n == sizeof hello && hello.magic == TERRET_WIRE_HELLO_MAGIC)
    {
      close (said);
      return TRUE;
    }

  if (ret == 0)
    kill (self->pid, SIGKILL);
  close (self->socket);
  self->socket = -1;
  while (waitpid (self->pid, &status, 0) < 0 && errno == EINTR)
    ;
  self->pid = 0;
  {
    g_autofree char *words = read_said (said);
    /* The bridge's own status for a far side that runs commands (its
     * probe did) but not the launcher (terret-launcher-bridge.c). */
    gboolean no_launcher = probe != NULL && WIFEXITED (status) && WEXITSTATUS (status) == 3;

    close (said);
    g_set_error (error, TERRET_EXEC_ERROR,
                 no_launcher ? TERRET_EXEC_ERROR_NO_LAUNCHER : TERRET_EXEC_ERROR_UNAVAILABLE,
                 "Could not reach %s: %s", _terret_far_side_get_name (self->far),
                 *words != '\0' ? words : "the bridge ended without a word");
  }
  return FALSE;
}

static gboolean
link_start (TerretLauncherLink  *self,
            GError             **error)
{
  const char *program = _terret_launcher_program ();
  g_autofree char *program_dir = g_path_get_dirname (program);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  char *no_environ[] = { NULL };
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t all, none;
  int pair[2];
  int filter = -1;
  int said = -1;
  pid_t pid;
  int ret;

  if (self->far != NULL)
    return _terret_far_side_has_socket (self->far) ? link_start_socket (self, error)
                                                    : link_start_far (self, error);

  if (self->wrapper != NULL)
    {
      for (guint i = 0; self->wrapper[i] != NULL; i++)
        {
          /* The launcher's own directory, which a private /tmp would hide
           * (an uninstalled tree under /tmp), and the filter, ahead of
           * the wrapper's `--`. */
          if (g_str_equal (self->wrapper[i], "--") && self->wrapper[i + 1] == NULL)
            {
              g_ptr_array_add (argv, (char *)"--ro-bind");
              g_ptr_array_add (argv, program_dir);
              g_ptr_array_add (argv, program_dir);
              if (self->filter != NULL)
                {
                  g_ptr_array_add (argv, (char *)"--seccomp");
                  g_ptr_array_add (argv, (char *)"4");
                }
            }
          g_ptr_array_add (argv, self->wrapper[i]);
        }
      g_ptr_array_add (argv, (char *)program);
      if ((said = memfd_create ("terret-sandbox-said", MFD_CLOEXEC)) < 0 ||
          (self->filter != NULL && (filter = memfd_with ("terret-seccomp", self->filter)) < 0))
        {
          int saved_errno = errno;

          if (said >= 0)
            close (said);
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                       "Could not set up the sandbox: %s", g_strerror (saved_errno));
          return FALSE;
        }
    }
  else
    g_ptr_array_add (argv, (char *)"terret-launcher");
  g_ptr_array_add (argv, (char *)"--socket");
  g_ptr_array_add (argv, (char *)"3");
  g_ptr_array_add (argv, NULL);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      int saved_errno = errno;

      if (said >= 0)
        close (said);
      if (filter >= 0)
        close (filter);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not create the launcher's socket: %s", g_strerror (saved_errno));
      return FALSE;
    }

  sigfillset (&all);
  sigemptyset (&none);
  posix_spawnattr_init (&attr);
  /* A session of its own, so neither the launcher nor anything it starts
   * has the host's terminal or gets its ^C; default dispositions and an
   * empty mask, whatever the host's thread had. */
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
                                   POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setsigmask (&attr, &none);

  posix_spawn_file_actions_init (&actions);
  /* Not the host's stdin (a terminal, or a serve client's requests):
   * nothing the launcher starts has any business with it. */
  posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, pair[1], 3);
  if (self->wrapper != NULL)
    {
      if (filter >= 0)
        posix_spawn_file_actions_adddup2 (&actions, filter, 4);
      /* The wrapper's complaints, for the error; what the launcher would
       * say later goes there too, unread. */
      posix_spawn_file_actions_adddup2 (&actions, said, 1);
      posix_spawn_file_actions_adddup2 (&actions, said, 2);
    }
  /* Only the socket: descriptors the host opened without close-on-exec
   * are none of the launcher's business, nor of what it starts. */
  posix_spawn_file_actions_addclosefrom_np (&actions, filter >= 0 ? 5 : 4);

  /* A sandboxed launcher gets no environment: it needs none (each
   * process's comes with its request), and whatever the host's holds
   * (the secrets env-exclude drops) must not be there to read. */
  ret = posix_spawn (&pid, self->wrapper != NULL ? self->wrapper[0] : program, &actions, &attr,
                     (char **)argv->pdata, self->wrapper != NULL ? no_environ : environ);

  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  close (pair[1]);
  if (filter >= 0)
    close (filter);

  if (ret != 0)
    {
      close (pair[0]);
      if (said >= 0)
        close (said);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not start the launcher %s: %s%s",
                   self->wrapper != NULL ? self->wrapper[0] : program, g_strerror (ret),
                   ret == ENOENT ? " (is terret-exec installed completely? set "
                                   TERRET_LAUNCHER_ENV " to use another one)" : "");
      return FALSE;
    }

  self->socket = pair[0];
  self->pid = pid;

  if (!wait_hello (self, said, error))
    {
      if (said >= 0)
        close (said);
      link_stop (self);
      return FALSE;
    }
  if (said >= 0)
    close (said);
  return TRUE;
}

/* One request and its reply. Returns the unit's pid, or 0 with errno set
 * (EPIPE or ECONNRESET when the launcher is gone). */
static pid_t
link_request (TerretLauncherLink *self,
                    int              *fds,
                    guint             n_fds,
                    int              *remote_error)
{
  TerretWireSpawn request = { TERRET_WIRE_MAGIC, n_fds };
  TerretWireReply reply = { 0 };
  char control[CMSG_SPACE (TERRET_WIRE_MAX_FDS * sizeof (int))] = { 0 };
  struct iovec iov = { &request, sizeof request };
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  ssize_t n;

  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE (n_fds * sizeof (int));
  cmsg = CMSG_FIRSTHDR (&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (n_fds * sizeof (int));
  memcpy (CMSG_DATA (cmsg), fds, n_fds * sizeof (int));

  do
    n = sendmsg (self->socket, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return 0;

  do
    n = recv (self->socket, &reply, sizeof reply, 0);
  while (n < 0 && errno == EINTR);
  if (n == 0)
    errno = ECONNRESET;
  if (n != sizeof reply || reply.magic != TERRET_WIRE_MAGIC)
    {
      if (n > 0)
        errno = EPROTO;
      return 0;
    }

  *remote_error = reply.error;
  errno = reply.error;
  return reply.unit_pid;
}

/*
 * _terret_launcher_link_spawn:
 *
 * Asks the launcher to start a unit for one process: @payload_fd holds
 * the plan, @unit_fd is the unit's end of its socket, @child_fds the
 * child's descriptors the plan refers to. The descriptors are only
 * borrowed. Starts the launcher when there is none, or again when the
 * previous one went away. Returns the unit's pid, or 0.
 */
int
_terret_launcher_link_spawn (TerretLauncherLink  *self,
                          int                payload_fd,
                          int                unit_fd,
                          const int         *child_fds,
                          guint              n_child_fds,
                          GError           **error)
{
  int fds[TERRET_WIRE_MAX_FDS];
  guint n_fds = 0;
  pid_t unit = 0;
  int remote_error = 0;

  g_return_val_if_fail (n_child_fds <= TERRET_WIRE_MAX_FDS - TERRET_WIRE_FD_CHILD, 0);

  fds[n_fds++] = payload_fd;
  fds[n_fds++] = unit_fd;
  for (guint i = 0; i < n_child_fds; i++)
    fds[n_fds++] = child_fds[i];

  g_mutex_lock (&self->mutex);
  for (guint attempt = 0; attempt < 2 && unit == 0; attempt++)
    {
      if (self->socket < 0 && !link_start (self, error))
        break;

      remote_error = 0;
      unit = link_request (self, fds, n_fds, &remote_error);
      if (unit == 0 && remote_error == 0)
        {
          /* The launcher went away (killed, or it crashed): reap it and
           * start another, once. Its units are not affected. */
          link_stop (self);
          continue;
        }
      break;
    }
  g_mutex_unlock (&self->mutex);

  if (unit == 0 && error != NULL && *error == NULL)
    {
      int saved_errno = remote_error != 0 ? remote_error : errno;

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "The launcher could not start the process: %s", g_strerror (saved_errno));
    }

  return unit;
}

/* --- Pools ----------------------------------------------------------- */

void
_terret_launcher_link_pool_init (TerretLauncherLinkPool *pool)
{
  g_mutex_init (&pool->mutex);
  pool->by_wrapper = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify)_terret_launcher_link_unref);
}

void
_terret_launcher_link_pool_clear (TerretLauncherLinkPool *pool)
{
  g_clear_pointer (&pool->by_wrapper, g_hash_table_unref);
  g_mutex_clear (&pool->mutex);
}

/* The link to @far, made on first use; a reference. Its bridge starts
 * with its first spawn. */
TerretLauncherLink *
_terret_launcher_link_pool_get_far (TerretLauncherLinkPool *pool,
                                    TerretFarSide          *far)
{
  g_autofree char *key = _terret_far_side_dup_key (far);
  TerretLauncherLink *launcher_link;

  g_mutex_lock (&pool->mutex);
  launcher_link = g_hash_table_lookup (pool->by_wrapper, key);
  if (launcher_link == NULL)
    {
      launcher_link = _terret_launcher_link_new_far (far);
      g_hash_table_insert (pool->by_wrapper, g_steal_pointer (&key), launcher_link);
    }
  _terret_launcher_link_ref (launcher_link);
  g_mutex_unlock (&pool->mutex);

  return launcher_link;
}

/* The link for the sandbox @key names (NULL: none), made on first use
 * with @wrapper and @filter; a reference. Its launcher starts with its
 * first spawn. */
TerretLauncherLink *
_terret_launcher_link_pool_get (TerretLauncherLinkPool *pool,
                                const char             *key,
                                const char * const     *wrapper,
                                GBytes                 *filter)
{
  TerretLauncherLink *launcher_link;

  if (key == NULL)
    key = "";
  g_mutex_lock (&pool->mutex);
  launcher_link = g_hash_table_lookup (pool->by_wrapper, key);
  if (launcher_link == NULL)
    {
      launcher_link = _terret_launcher_link_new_wrapped (wrapper, filter);
      g_hash_table_insert (pool->by_wrapper, g_strdup (key), launcher_link);
    }
  _terret_launcher_link_ref (launcher_link);
  g_mutex_unlock (&pool->mutex);

  return launcher_link;
}
