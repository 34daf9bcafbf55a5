/* terret-ssh-mux.c: the master connections an executor's sessions share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-ssh-master.h"
#include "terret-ssh-mux.h"

/*
 * TerretSshMux:
 *
 * The OpenSSH master connections the sessions of one executor share
 * (ControlMaster): one TCP connection and one login carry many sessions,
 * so a burst of sessions is a handful of connections, not one each for
 * sshd's MaxStartups to refuse.
 *
 * A master is `ssh -M -N` under a launcher unit of its own, never inside
 * a session: closing the session that happened to open it leaves the
 * others running. It is opened when a session finds none with room,
 * and its private ControlPath lives in a directory of the pool's own
 * (mode 0700), removed when the pool is closed with the executor, after
 * `ssh -O exit` and the end of every master's unit.
 *
 * A master is up when its stdout closes while it runs: with
 * ControlPersist=no, ssh replaces its stdout with /dev/null once it is
 * logged in and listens for clients (OpenSSH 7.7 and later), so the read
 * end of a pipe on it is an fd a main loop can watch; one that fails
 * closes it by exiting. Its stderr is kept to explain a failure: the
 * classified message is each waiting session's.
 *
 * sshd takes MaxSessions sessions per connection (10 by default), so a
 * master carries at most SESSIONS_PER_MASTER, fewer once a master refused
 * one, and at most MASTERS_OPENING_AT_ONCE masters log in at once (sshd
 * starts refusing at 10 unauthenticated connections); sessions beyond
 * wait in a queue for room.
 *
 * Each session's process (see terret_ssh_mux_ticket_wrap()) is a small
 * sh that runs the session's client against the control path the pool
 * sends it on a socket, and asks for another when that master took no
 * session (it refused one, or died): the pool then finds or opens
 * another, and only a master that cannot be had fails the session, with
 * the master's own words. The pool's side of that socket, and the
 * master a session waits for, are watched on the main context the
 * session started on, which runs for as long as the session's start is
 * pending, and no longer once its shell answered; nothing waits on a
 * thread.
 *
 * Everything is guarded by the pool's mutex: sessions start and end on
 * any thread.
 */

/* sshd's MaxSessions defaults to 10: two short of it, so that sessions
 * that are still being torn down on the server's side leave room. */
#define SESSIONS_PER_MASTER 8

/* sshd's MaxStartups defaults to 10:30:100: beyond 10 connections
 * that have not logged in yet, it drops new ones at random. */
#define MASTERS_OPENING_AT_ONCE 4

/* A session whose client got no session this many times fails with what
 * the last attempt said. */
#define MAX_ATTEMPTS 16

/* Masters opened for one session that failed as a connection closed
 * while logging in (sshd dropping it under load) before the session
 * fails too. */
#define MAX_OPENS 3

/* What the session's process exits with when no master can be had (the
 * pool closed its socket): the pool knows why. */
#define NO_MASTER_STATUS 206

struct _TerretSshMux
{
  gatomicrefcount ref;

  GMutex mutex;
  char *dir;                    /* (owned) (nullable) until the first session */
  guint next_name;
  GPtrArray *masters;           /* (owned) (element-type TerretSshMaster) connecting or up */
  GPtrArray *tickets;           /* (owned) (element-type TerretSshMuxTicket) joined, not left */
  GQueue queue;                 /* (element-type TerretSshMuxTicket) waiting for room */
  char *capacity_signature;     /* (owned) (nullable) whom capacity was learned of */
  guint capacity;               /* sessions per master */
  TerretLauncher *spare;        /* (owned) (nullable) a launcher no session uses any more */
};

struct _TerretSshMuxTicket
{
  gatomicrefcount ref;

  /* Constant once joined. */
  TerretSshMux *mux;            /* (owned) */
  char *signature;              /* (owned) */
  GStrv master_argv;            /* (owned) */
  char *marker;                 /* (owned) the file a failed attempt leaves */

  /* Under the pool's mutex. */
  int fd;                       /* the pool's end of the session's socket */
  int wrapper_fd;               /* the session's end, until spawned */
  int attempts_fd;              /* the client's stderr: what a failed attempt said */
  TerretLauncher *launcher;     /* (owned) (nullable) once the session spawned */
  GMainContext *context;        /* (owned) (nullable) where it is watched */
  GSource *request_source;      /* (owned) (nullable) */
  GSource *ready_source;        /* (owned) (nullable) its master coming up */
  TerretSshMaster *master;               /* (owned) (nullable) */
  gboolean sent;                /* its master's path was sent */
  gboolean queued;
  gboolean left;
  guint attempts;
  guint opens;
  TerretSshFailure failure;
  char *said;                   /* (owned) (nullable) */
};

/* What a locked section leaves to do once the mutex is released: sources
 * to drop (their last reference may free a ticket, and the pool with it)
 * and masters to shut down (which waits). */
typedef struct
{
  GPtrArray *sources;           /* (element-type GSource) */
  GPtrArray *masters;           /* (element-type TerretSshMaster) */
} Deferred;

static gboolean ticket_on_ready (int fd, GIOCondition condition, gpointer user_data);
static gboolean ticket_on_request (int fd, GIOCondition condition, gpointer user_data);

TerretSshMuxTicket *
terret_ssh_mux_ticket_ref (TerretSshMuxTicket *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/* --- Deferred work --------------------------------------------------- */

static void
deferred_init (Deferred *deferred)
{
  deferred->sources = g_ptr_array_new_with_free_func ((GDestroyNotify)g_source_unref);
  deferred->masters = g_ptr_array_new ();
}

static void
deferred_drop_source (Deferred  *deferred,
                      GSource  **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_ptr_array_add (deferred->sources, g_steal_pointer (source));
}

static void
deferred_flush (TerretSshMux *self,
                Deferred     *deferred)
{
  if (deferred->masters->len > 0)
    {
      g_autoptr(TerretLauncher) launcher = NULL;

      /* The spare launcher is borrowed while the masters exit: nobody
       * else may use it meanwhile. */
      g_mutex_lock (&self->mutex);
      launcher = g_steal_pointer (&self->spare);
      g_mutex_unlock (&self->mutex);

      for (guint i = 0; i < deferred->masters->len; i++)
        terret_ssh_master_shut_down (g_ptr_array_index (deferred->masters, i), launcher);

      g_mutex_lock (&self->mutex);
      for (guint i = 0; i < deferred->masters->len; i++)
        terret_ssh_master_unref (g_ptr_array_index (deferred->masters, i));
      if (self->spare == NULL)
        self->spare = g_steal_pointer (&launcher);
      g_mutex_unlock (&self->mutex);
    }
  g_clear_pointer (&deferred->masters, g_ptr_array_unref);

  /* Last: the last reference to a ticket may be a source's. */
  g_clear_pointer (&deferred->sources, g_ptr_array_unref);
}

/* Starts a master for @argv on a new control path of the pool's. */
static TerretSshMaster *
master_open_locked (TerretSshMux        *self,
                    TerretLauncher      *launcher,
                    const char          *signature,
                    const char * const  *argv,
                    GError             **error)
{
  g_autofree char *path = g_strdup_printf ("%s/m%u", self->dir, self->next_name++);
  TerretSshMaster *master = terret_ssh_master_open (launcher, path, signature, argv, error);

  if (master != NULL)
    g_ptr_array_add (self->masters, master);
  return master;
}

static guint
count_connecting (TerretSshMux *self)
{
  guint n = 0;

  for (guint i = 0; i < self->masters->len; i++)
    if (((TerretSshMaster *)g_ptr_array_index (self->masters, i))->state == TERRET_SSH_MASTER_CONNECTING)
      n++;
  return n;
}

/* --- Tickets ------------------------------------------------------------ */

static void
ticket_unwatch_locked (TerretSshMuxTicket *ticket,
                       Deferred           *deferred)
{
  deferred_drop_source (deferred, &ticket->ready_source);
}

/* Watches the master the ticket waits for, on the ticket's context. */
static void
ticket_watch_locked (TerretSshMuxTicket *ticket)
{
  if (ticket->context == NULL || ticket->ready_source != NULL || ticket->master == NULL ||
      ticket->master->state != TERRET_SSH_MASTER_CONNECTING)
    return;

  ticket->ready_source = g_unix_fd_source_new (ticket->master->ready_fd,
                                               G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (ticket->ready_source, "[terret] ssh master up");
  g_source_set_callback (ticket->ready_source, G_SOURCE_FUNC (ticket_on_ready),
                         terret_ssh_mux_ticket_ref (ticket),
                         (GDestroyNotify)terret_ssh_mux_ticket_unref);
  g_source_attach (ticket->ready_source, ticket->context);
}

static void
ticket_detach_locked (TerretSshMuxTicket *ticket,
                      Deferred           *deferred)
{
  ticket_unwatch_locked (ticket, deferred);
  if (ticket->master != NULL)
    {
      ticket->master->n_tickets--;
      g_clear_pointer (&ticket->master, terret_ssh_master_unref);
    }
  ticket->sent = FALSE;
}

static void
ticket_dequeue_locked (TerretSshMux       *self,
                       TerretSshMuxTicket *ticket)
{
  if (ticket->queued)
    {
      g_queue_remove (&self->queue, ticket);
      ticket->queued = FALSE;
    }
}

/* No master can be had: the session's process reads the end of its
 * socket, and exits. */
static void
ticket_fail_locked (TerretSshMux       *self,
                    TerretSshMuxTicket *ticket,
                    TerretSshFailure    failure,
                    const char         *said,
                    Deferred           *deferred)
{
  ticket_detach_locked (ticket, deferred);
  ticket_dequeue_locked (self, ticket);
  if (ticket->failure == TERRET_SSH_FAILURE_NONE)
    {
      ticket->failure = failure;
      ticket->said = g_strdup (said);
    }
  if (ticket->fd >= 0)
    shutdown (ticket->fd, SHUT_WR);
}

/* Sends the session the control path of its master, which is up. */
static void
ticket_send_locked (TerretSshMuxTicket *ticket,
                    Deferred           *deferred)
{
  g_autofree char *line = g_strdup_printf ("%s\n", ticket->master->path);
  gssize n;

  ticket_unwatch_locked (ticket, deferred);
  ticket->sent = TRUE;
  if (ticket->fd < 0)
    return;
  /* A line a new socket takes whole; a session that is gone reads
   * nothing anyway. */
  do
    n = send (ticket->fd, line, strlen (line), MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
}

/* Finds the ticket a master with room, opening one when none has room
 * and few are logging in; else queues it. @launcher is what a master is
 * started with, when one may be. */
static void
ticket_assign_locked (TerretSshMux       *self,
                      TerretSshMuxTicket *ticket,
                      TerretLauncher     *launcher,
                      Deferred           *deferred,
                      GError            **error)
{
  TerretSshMaster *found = NULL;

  g_assert (ticket->master == NULL);

  for (guint i = 0; i < self->masters->len; i++)
    {
      TerretSshMaster *master = g_ptr_array_index (self->masters, i);

      if (master->state == TERRET_SSH_MASTER_GONE || master->full || master->n_tickets >= self->capacity ||
          g_strcmp0 (master->signature, ticket->signature) != 0)
        continue;
      /* One that is up first: a session there starts at once. */
      if (found == NULL || (found->state != TERRET_SSH_MASTER_UP && master->state == TERRET_SSH_MASTER_UP))
        found = master;
    }

  if (found == NULL && launcher != NULL && count_connecting (self) < MASTERS_OPENING_AT_ONCE)
    {
      g_autoptr(GError) local_error = NULL;

      found = master_open_locked (self, launcher, ticket->signature,
                                  (const char * const *)ticket->master_argv, &local_error);
      if (found == NULL)
        {
          g_autofree char *said = g_strdup_printf ("could not start the master connection: %s",
                                                   local_error->message);

          ticket_fail_locked (self, ticket, TERRET_SSH_FAILURE_OTHER, said, deferred);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return;
        }
    }

  if (found == NULL)
    {
      if (!ticket->queued)
        {
          g_queue_push_tail (&self->queue, ticket);
          ticket->queued = TRUE;
        }
      return;
    }

  ticket_dequeue_locked (self, ticket);
  ticket->master = terret_ssh_master_ref (found);
  found->n_tickets++;
  if (found->state == TERRET_SSH_MASTER_UP)
    ticket_send_locked (ticket, deferred);
  else
    ticket_watch_locked (ticket);
}

/* The pool after anything changed: masters that came up get their
 * sessions, masters gone are dropped and their waiting sessions sent
 * elsewhere or failed, and the queue gets the room there is. */
static void
pump_locked (TerretSshMux *self,
             Deferred     *deferred)
{
  for (guint i = 0; i < self->masters->len; i++)
    terret_ssh_master_update (g_ptr_array_index (self->masters, i));

  for (guint i = 0; i < self->tickets->len; i++)
    {
      TerretSshMuxTicket *ticket = g_ptr_array_index (self->tickets, i);
      TerretSshMaster *master = ticket->master;

      if (master == NULL || ticket->sent)
        continue;
      if (master->state == TERRET_SSH_MASTER_UP)
        ticket_send_locked (ticket, deferred);
      else if (master->state == TERRET_SSH_MASTER_GONE)
        {
          /* sshd drops connections that have not logged in yet when
           * it has too many: another master may get in. */
          if (master->failure == TERRET_SSH_FAILURE_CLOSED && ++ticket->opens < MAX_OPENS)
            {
              ticket_detach_locked (ticket, deferred);
              g_queue_push_head (&self->queue, ticket);
              ticket->queued = TRUE;
            }
          else
            ticket_fail_locked (self, ticket, master->failure, master->said, deferred);
        }
    }

  /* Gone masters leave the pool, as do idle ones opened with options
   * no session asks for any more. */
  for (guint i = self->masters->len; i-- > 0;)
    {
      TerretSshMaster *master = g_ptr_array_index (self->masters, i);

      if (master->state == TERRET_SSH_MASTER_GONE ||
          (master->n_tickets == 0 && g_strcmp0 (master->signature, self->capacity_signature) != 0))
        g_ptr_array_add (deferred->masters, g_ptr_array_steal_index (self->masters, i));
    }

  for (GList *l = self->queue.head; l != NULL;)
    {
      TerretSshMuxTicket *ticket = l->data;

      l = l->next;
      ticket_assign_locked (self, ticket,
                            ticket->launcher != NULL ? ticket->launcher : self->spare,
                            deferred, NULL);
    }
}

/* The first line of @text that says something: what a client that got
 * no session says first is why (what its fallback says after is the
 * ProxyCommand's refusal). */
static char *
first_line (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (*g_strstrip (lines[i]) != '\0')
      return g_strdup (lines[i]);
  return NULL;
}

/* The session's client got no session from its master: that master is
 * gone, or refused it (sshd's MaxSessions), or did something else the
 * client said; the session gets another. */
static void
ticket_retry_locked (TerretSshMux       *self,
                     TerretSshMuxTicket *ticket,
                     Deferred           *deferred)
{
  g_autofree char *text = terret_ssh_read_diagnostics (ticket->attempts_fd);
  g_autofree char *said = first_line (text);
  TerretSshMaster *master = ticket->master;

  /* What the next attempt says starts afresh: an attempt that failed is
   * no explanation for how the session ends. */
  if (ticket->attempts_fd >= 0 && ftruncate (ticket->attempts_fd, 0) < 0)
    g_debug ("Could not empty the client's messages: %s", g_strerror (errno));

  if (master == NULL || !ticket->sent)
    return;

  terret_ssh_master_check (master);

  if (master->state == TERRET_SSH_MASTER_UP && strstr (text, "Session open refused") != NULL)
    {
      guint others = master->n_tickets - 1;

      if (others == 0)
        {
          ticket_fail_locked (self, ticket, TERRET_SSH_FAILURE_NO_SESSION, said, deferred);
          return;
        }
      /* At most that many is what the server takes per connection
       * (others may still be on their way to a refusal), and that one
       * takes none until one of its sessions ended. */
      master->full = TRUE;
      if (others < self->capacity)
        {
          g_debug ("A master refused a session beside %u others: no more are sent to one",
                   others);
          self->capacity = others;
        }
    }

  if (++ticket->attempts >= MAX_ATTEMPTS)
    {
      ticket_fail_locked (self, ticket, TERRET_SSH_FAILURE_OTHER, said, deferred);
      return;
    }

  ticket_detach_locked (ticket, deferred);
  ticket_assign_locked (self, ticket, ticket->launcher != NULL ? ticket->launcher : self->spare,
                        deferred, NULL);
}

static gboolean
ticket_on_ready (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  TerretSshMuxTicket *ticket = user_data;
  TerretSshMux *self = ticket->mux;
  gboolean waiting;
  Deferred deferred;

  deferred_init (&deferred);
  g_mutex_lock (&self->mutex);
  if (!ticket->left && !g_source_is_destroyed (g_main_current_source ()))
    pump_locked (self, &deferred);
  waiting = !ticket->left && ticket->ready_source == g_main_current_source ();
  if (!waiting && ticket->ready_source == g_main_current_source ())
    g_ptr_array_add (deferred.sources, g_steal_pointer (&ticket->ready_source));
  g_mutex_unlock (&self->mutex);
  deferred_flush (self, &deferred);

  return waiting ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
ticket_on_request (int          fd,
                   GIOCondition condition,
                   gpointer     user_data)
{
  TerretSshMuxTicket *ticket = user_data;
  TerretSshMux *self = ticket->mux;
  gboolean ended = FALSE;
  guint requests = 0;
  Deferred deferred;

  deferred_init (&deferred);
  g_mutex_lock (&self->mutex);
  while (!ticket->left && ticket->fd >= 0)
    {
      char buffer[64];
      gssize n;

      do
        n = recv (ticket->fd, buffer, sizeof buffer, MSG_DONTWAIT);
      while (n < 0 && errno == EINTR);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n <= 0)
        {
          /* The session's process is gone. */
          ended = TRUE;
          break;
        }
      requests += (guint)(memchr (buffer, '\n', n) != NULL);
    }
  if (ticket->left)
    ended = TRUE;
  if (requests > 0 && !ended)
    {
      ticket_retry_locked (self, ticket, &deferred);
      pump_locked (self, &deferred);
    }
  if (ended && ticket->request_source == g_main_current_source ())
    g_ptr_array_add (deferred.sources, g_steal_pointer (&ticket->request_source));
  g_mutex_unlock (&self->mutex);
  deferred_flush (self, &deferred);

  return ended ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

/* --- Public ------------------------------------------------------------ */

TerretSshMux *
terret_ssh_mux_new (void)
{
  TerretSshMux *self = g_new0 (TerretSshMux, 1);

  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->mutex);
  self->masters = g_ptr_array_new ();
  self->tickets = g_ptr_array_new ();
  g_queue_init (&self->queue);
  self->capacity = SESSIONS_PER_MASTER;

  return self;
}

TerretSshMux *
terret_ssh_mux_ref (TerretSshMux *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
terret_ssh_mux_unref (TerretSshMux *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;

  terret_ssh_mux_close (self);
  g_assert (self->masters->len == 0 && self->tickets->len == 0);
  g_ptr_array_unref (self->masters);
  g_ptr_array_unref (self->tickets);
  g_free (self->capacity_signature);
  g_free (self->dir);
  g_mutex_clear (&self->mutex);
  g_free (self);
}

/* Only these characters go unquoted into the client's options and the
 * wrapper's ProxyCommand, and a socket's path has room for 107 bytes:
 * the names below this take up to 29, and a master binds its socket
 * first as its path and 17 more. */
static gboolean
is_plain_dir (const char *dir)
{
  if (strlen (dir) > 60)
    return FALSE;
  for (const char *p = dir; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("/._-", *p) == NULL)
      return FALSE;
  return TRUE;
}

static gboolean
ensure_dir_locked (TerretSshMux  *self,
                   GError       **error)
{
  g_autofree char *template = NULL;
  const char *base = g_get_user_runtime_dir ();

  if (self->dir != NULL)
    return TRUE;

  /* The user's runtime directory where there is one (as for the spools
   * of full output): a tmpfs emptied at logout, so even a host that was
   * killed leaves nothing for long. Without one GLib gives the cache
   * directory, which outlives the session: the temporary one then. */
  if (g_strcmp0 (base, g_get_user_cache_dir ()) == 0 || !is_plain_dir (base) ||
      g_mkdir_with_parents (base, 0700) < 0)
    base = g_get_tmp_dir ();
  if (!is_plain_dir (base))
    base = "/tmp";
  template = g_build_filename (base, "terret-ssh-XXXXXX", NULL);
  /* Private: whoever can connect to a control socket can run commands
   * on the remote host as the user. */
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create a directory for the ssh control sockets in %s: %s", base,
                   g_strerror (saved_errno));
      return FALSE;
    }
  self->dir = g_steal_pointer (&template);
  return TRUE;
}

/*
 * terret_ssh_mux_close:
 *
 * Closes every master (`ssh -O exit`, then the end of its unit) and
 * removes the pool's directory. Sessions that are still open lose their
 * connection. The pool stays usable: a session joining later opens a
 * master again.
 */
void
terret_ssh_mux_close (TerretSshMux *self)
{
  g_autoptr(TerretLauncher) launcher = NULL;
  g_autoptr(GPtrArray) masters = NULL;
  g_autofree char *dir = NULL;

  g_mutex_lock (&self->mutex);
  masters = g_steal_pointer (&self->masters);
  self->masters = g_ptr_array_new ();
  launcher = g_steal_pointer (&self->spare);
  /* Sessions still open keep the directory until they left: it holds
   * their markers. */
  if (self->tickets->len == 0)
    dir = g_steal_pointer (&self->dir);
  g_mutex_unlock (&self->mutex);

  for (guint i = 0; i < masters->len; i++)
    {
      TerretSshMaster *master = g_ptr_array_index (masters, i);

      terret_ssh_master_shut_down (master, launcher);
      g_mutex_lock (&self->mutex);
      terret_ssh_master_unref (master);
      g_mutex_unlock (&self->mutex);
    }

  if (dir != NULL)
    {
      g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
      const char *name;

      /* What sessions killed mid-attempt left. */
      while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
        {
          g_autofree char *path = g_build_filename (dir, name, NULL);

          g_unlink (path);
        }
      if (g_rmdir (dir) < 0)
        g_debug ("Could not remove %s: %s", dir, g_strerror (errno));
    }
}

/*
 * terret_ssh_mux_join:
 * @launcher: the session's launcher, with the client's environment; a
 *   master is started with it (now, when none has room)
 * @master_argv: the master's command line, `ssh -M -N ...` up to and
 *   including the destination, without a control path
 *
 * A new session's place on a master: sent at once to one that is up and
 * has room, else waiting for one. Its process is the wrapper of
 * terret_ssh_mux_ticket_wrap(), given terret_ssh_mux_ticket_steal_wrapper_fd()
 * as its fd 3; once it is spawned, terret_ssh_mux_ticket_start().
 */
TerretSshMuxTicket *
terret_ssh_mux_join (TerretSshMux        *self,
                     TerretLauncher      *launcher,
                     const char * const  *master_argv,
                     GError             **error)
{
  g_autoptr(TerretSshMuxTicket) ticket = NULL;
  g_autoptr(GError) local_error = NULL;
  int pair[2];
  Deferred deferred;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create a socket for the ssh client: %s", g_strerror (saved_errno));
      return NULL;
    }
  g_unix_set_fd_nonblocking (pair[0], TRUE, NULL);

  ticket = g_new0 (TerretSshMuxTicket, 1);
  g_atomic_ref_count_init (&ticket->ref);
  ticket->mux = terret_ssh_mux_ref (self);
  ticket->signature = g_strjoinv ("\n", (char **)master_argv);
  ticket->master_argv = g_strdupv ((char **)master_argv);
  ticket->fd = pair[0];
  ticket->wrapper_fd = pair[1];
  ticket->attempts_fd = -1;
  /* Left, until it is in the pool: its end needs no pool's lock. */
  ticket->left = TRUE;

  deferred_init (&deferred);
  g_mutex_lock (&self->mutex);
  if (ensure_dir_locked (self, &local_error))
    {
      ticket->marker = g_strdup_printf ("%s/p%u", self->dir, self->next_name++);
      ticket->left = FALSE;
      g_ptr_array_add (self->tickets, ticket);

      /* Another host, port or key: what was learned of the last one
       * does not hold. */
      if (g_strcmp0 (self->capacity_signature, ticket->signature) != 0)
        {
          g_free (self->capacity_signature);
          self->capacity_signature = g_strdup (ticket->signature);
          self->capacity = SESSIONS_PER_MASTER;
        }

      pump_locked (self, &deferred);
      ticket_assign_locked (self, ticket, launcher, &deferred, &local_error);
    }
  g_mutex_unlock (&self->mutex);
  deferred_flush (self, &deferred);

  if (local_error != NULL)
    {
      g_autofree char *said = NULL;

      terret_ssh_mux_ticket_leave (ticket, &said);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  return g_steal_pointer (&ticket);
}

/* The session's process: the client, run again as long as the master it
 * was sent to took no session. On fd 3 a line from the pool is a
 * master's control path, a line to it asks for another, and the end of
 * it means there is none. When a master takes no session (refused, or
 * dead), ssh falls back to a connection of its own, through the
 * ProxyCommand, which instead leaves the marker file $0 and fails:
 * nothing else tells "no session" from the remote shell's own status,
 * and a connection of its own is what a burst must not open. SHELL is
 * what ssh runs that command with. */
static const char wrapper_script[] =
  "c=$1; shift; "
  "while IFS= read -r p <&3; do "
  "rm -f \"$0\"; "
  "SHELL=/bin/sh \"$c\" -o \"ControlPath=$p\" -o \"ProxyCommand=sh -c ': >$0'\" \"$@\" 3<&-; "
  "s=$?; "
  "[ -e \"$0\" ] || exit \"$s\"; "
  "echo >&3; "
  "done; "
  "rm -f \"$0\"; "
  "exit " G_STRINGIFY (NO_MASTER_STATUS);

/*
 * terret_ssh_mux_ticket_wrap:
 * @client_argv: the session's client: `ssh -tt ...`, the destination and
 *   the remote command, without a control path
 *
 * Returns: (transfer full): the argument vector of the session's process
 */
char **
terret_ssh_mux_ticket_wrap (TerretSshMuxTicket *self,
                            const char * const *client_argv)
{
  GPtrArray *argv = g_ptr_array_new ();

  g_ptr_array_add (argv, g_strdup ("/bin/sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (wrapper_script));
  g_ptr_array_add (argv, g_strdup (self->marker));
  for (guint i = 0; client_argv[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (client_argv[i]));
  g_ptr_array_add (argv, NULL);

  return (char **)g_ptr_array_free (argv, FALSE);
}

/* The session's end of its socket, for its fd 3. */
int
terret_ssh_mux_ticket_steal_wrapper_fd (TerretSshMuxTicket *self)
{
  TerretSshMux *mux = self->mux;
  int fd;

  g_mutex_lock (&mux->mutex);
  fd = self->wrapper_fd;
  self->wrapper_fd = -1;
  g_mutex_unlock (&mux->mutex);

  return fd;
}

/*
 * terret_ssh_mux_ticket_start:
 * @launcher: the launcher the session's process was spawned with; the
 *   pool starts masters with it from now on
 * @attempts_fd: (transfer full): the client's stderr, to read and empty
 *   after an attempt that failed
 *
 * The session's process runs: the pool watches its requests, and the
 * master it waits for, on the calling thread's main context.
 */
void
terret_ssh_mux_ticket_start (TerretSshMuxTicket *self,
                             TerretLauncher     *launcher,
                             int                 attempts_fd)
{
  TerretSshMux *mux = self->mux;
  Deferred deferred;

  deferred_init (&deferred);
  g_mutex_lock (&mux->mutex);
  g_assert (self->launcher == NULL && self->context == NULL);
  self->launcher = g_object_ref (launcher);
  self->context = g_main_context_ref_thread_default ();
  self->attempts_fd = attempts_fd;

  self->request_source = g_unix_fd_source_new (self->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (self->request_source, "[terret] ssh session attempts");
  g_source_set_callback (self->request_source, G_SOURCE_FUNC (ticket_on_request),
                         terret_ssh_mux_ticket_ref (self),
                         (GDestroyNotify)terret_ssh_mux_ticket_unref);
  g_source_attach (self->request_source, self->context);

  ticket_watch_locked (self);
  /* It may open a master now, for itself or for one queued. */
  if (!self->left)
    pump_locked (mux, &deferred);
  g_mutex_unlock (&mux->mutex);
  deferred_flush (mux, &deferred);
}

/*
 * terret_ssh_mux_ticket_settle:
 *
 * The session's shell answered: its client has its session, and will
 * ask for no other master. The pool stops watching it, and lets go of
 * the context it started on (a synchronous run's, which nobody iterates
 * any more).
 */
void
terret_ssh_mux_ticket_settle (TerretSshMuxTicket *self)
{
  TerretSshMux *mux = self->mux;
  Deferred deferred;

  deferred_init (&deferred);
  g_mutex_lock (&mux->mutex);
  if (self->sent)
    {
      deferred_drop_source (&deferred, &self->request_source);
      deferred_drop_source (&deferred, &self->ready_source);
      g_clear_pointer (&self->context, g_main_context_unref);
    }
  g_mutex_unlock (&mux->mutex);
  deferred_flush (mux, &deferred);
}

/*
 * terret_ssh_mux_ticket_leave:
 * @said: (out) (transfer full) (nullable): the line that says why
 *
 * The session ended (its process is gone). Tells why it had no master
 * (none could be had) or lost it (its master is gone): the failure of
 * the session's connection when the client itself had nothing to say.
 *
 * Returns: NONE, or the master's failure
 */
TerretSshFailure
terret_ssh_mux_ticket_leave (TerretSshMuxTicket  *self,
                             char               **said)
{
  TerretSshMux *mux = self->mux;
  TerretSshFailure failure;
  Deferred deferred;

  deferred_init (&deferred);
  g_mutex_lock (&mux->mutex);
  failure = self->failure;
  *said = g_strdup (self->said);
  if (failure == TERRET_SSH_FAILURE_NONE && self->master != NULL && self->sent)
    {
      TerretSshMaster *master = self->master;

      /* A client whose master died says nothing: the master's end is
       * what ended it. */
      terret_ssh_master_check (master);
      if (master->state == TERRET_SSH_MASTER_GONE)
        {
          failure = master->failure;
          g_free (*said);
          *said = g_strdup (master->said);
        }
    }

  if (!self->left)
    {
      self->left = TRUE;
      g_ptr_array_remove (mux->tickets, self);
      if (self->master != NULL && self->sent)
        self->master->full = FALSE;
      ticket_detach_locked (self, &deferred);
      ticket_dequeue_locked (mux, self);
      deferred_drop_source (&deferred, &self->request_source);
      if (mux->spare == NULL)
        mux->spare = g_steal_pointer (&self->launcher);
      pump_locked (mux, &deferred);
    }
  g_mutex_unlock (&mux->mutex);
  deferred_flush (mux, &deferred);

  return failure;
}

void
terret_ssh_mux_ticket_unref (TerretSshMuxTicket *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;

  /* Sources hold references: none is left, nor a master. */
  g_assert (self->left && self->master == NULL);
  g_assert (self->request_source == NULL && self->ready_source == NULL);
  if (self->fd >= 0)
    close (self->fd);
  if (self->wrapper_fd >= 0)
    close (self->wrapper_fd);
  if (self->attempts_fd >= 0)
    close (self->attempts_fd);
  g_clear_object (&self->launcher);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->signature);
  g_strfreev (self->master_argv);
  g_free (self->marker);
  g_free (self->said);
  terret_ssh_mux_unref (self->mux);
  g_free (self);
}
