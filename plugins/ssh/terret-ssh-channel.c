/* terret-ssh-channel.c: a shell on a remote terminal behind `ssh -tt`
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "terret-ssh-channel.h"

/*
 * TerretSshChannel:
 *
 * Carries a session's bash on a terminal of a remote host: the local
 * process is an OpenSSH client run with `-tt`, so the remote side gets a
 * pty and the session's terminal protocol applies unchanged. The client's
 * stdin and stdout are plain pipes (with `-tt` the client needs no local
 * terminal, and having none it leaves nothing in raw mode behind). Its
 * stderr, which carries only the client's own messages (the remote
 * side's stderr is on the remote terminal), goes to an anonymous
 * in-memory file that is read once the client has ended, to say why a
 * connection failed.
 *
 * The client runs under the executor's launcher like any process, so
 * ending it ends whatever it started too (a ProxyCommand). Ending the
 * client closes the connection; sshd then hangs up the remote terminal,
 * and the hangup ends the remote shell and everything in its process
 * group.
 *
 * With a pool of master connections (see TerretSshMux), the client is a
 * multiplexing one, run by the pool's small wrapper until a master takes
 * its session: it logs in nowhere, and ending it closes its session on
 * the master (the same hangup), never the master.
 *
 * The terminal's modes cannot be set from this side, so the channel has
 * no prepare_run: the session sets them with `stty` in its handshake.
 */
struct _TerretSshChannel
{
  TerretShellChannel parent_instance;

  /* Guards everything below: the executor sets the client between runs,
   * and a failure is read on whichever thread finishes a run. */
  GMutex mutex;
  GStrv client_argv;            /* (owned) (nullable) */
  GStrv master_argv;            /* (owned) (nullable) without a pool */
  TerretSshMux *mux;            /* (owned) (nullable) the masters to share */
  TerretSshMuxTicket *ticket;   /* (owned) (nullable) the running client's place there */
  char *remote_launcher;        /* (owned) (nullable) the remote-launcher setting */
  char *destination;            /* (owned) (nullable) for messages */
  int stderr_fd;                /* the running client's diagnostics, or -1 */
  TerretSshFailure failure;
  char *said;                   /* (owned) (nullable) */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretSshChannel, terret_ssh_channel, TERRET_TYPE_SHELL_CHANNEL,
                                G_TYPE_FLAG_FINAL, {})

/* A conventional size for the remote terminal: the client has no local
 * terminal to copy one from and would announce 0x0, which makes programs
 * that ask guess. */
#define REMOTE_ROWS 24
#define REMOTE_COLUMNS 80

/* How long a client that has closed its stdout gets to exit by itself
 * before it is killed, so that its exit status (the remote command's)
 * is not lost to the kill. It is already leaving: this is a bound, not a
 * wait anybody should ever see. */
#define LEAVING_GRACE_MSEC 1000

/* A word for a POSIX shell: single-quoted, with each `'` closed, escaped
 * and reopened. Any byte but NUL survives unchanged. */
static void
append_quoted (GString    *out,
               const char *word)
{
  g_string_append_c (out, '\'');
  for (const char *p = word; *p != '\0'; p++)
    {
      if (*p == '\'')
        g_string_append (out, "'\\''");
      else
        g_string_append_c (out, *p);
    }
  g_string_append_c (out, '\'');
}

/* Where a remote terret-exec installs its launcher, for `auto`: the
 * package's libexecdir under the usual prefixes. */
static const char * const launcher_dirs[] = {
  "/usr/libexec/terret-exec-1", "/usr/local/libexec/terret-exec-1",
};

static void
append_words (GString            *command,
              const char         *containment,
              const char * const *envp,
              const char * const *argv)
{
  g_string_append (command, " env TERRET_CONTAINMENT=");
  g_string_append (command, containment);
  for (guint i = 0; envp != NULL && envp[i] != NULL; i++)
    {
      g_string_append_c (command, ' ');
      append_quoted (command, envp[i]);
    }
  for (guint i = 0; argv[i] != NULL; i++)
    {
      g_string_append_c (command, ' ');
      append_quoted (command, argv[i]);
    }
}

/*
 * terret_ssh_channel_build_command:
 *
 * The command line the remote login shell runs: size the terminal, go to
 * @cwd (when not %NULL), and replace itself with @argv under `env` with
 * @envp added to the remote account's own environment. It is POSIX shell
 * syntax, which every usual login shell understands. A `cd` that fails
 * ends the connection with TERRET_SSH_NO_DIRECTORY_STATUS, which the
 * channel turns into a clear failure: the shell's own message is on the
 * terminal too, but among the echo of the handshake on a terminal not yet
 * configured.
 *
 * What @argv starts is contained as well as the remote allows, and
 * TERRET_CONTAINMENT says how: under `terret-launcher --supervise`
 * (`launcher`: a subreaper that kills everything the shell left, setsid
 * jobs too, when the shell ends or the connection goes), found as
 * @remote_launcher says (%NULL: on PATH or in the package's libexecdir;
 * `none`: not used; else that path, which must be there); else in a PID
 * namespace of its own (`pid-namespace`: util-linux unshare, where the
 * account may, with a /proc of its own so that `ps` and `kill` agree on
 * pids; the kernel ends every process in it with its init, a `sh`
 * that waits for the shell so that the shell is not the namespace's init,
 * which signals from inside could not kill; a shell's exit status of 129
 * to 192 then reads as death by signal N - 128, the one thing a shell in
 * between cannot tell apart); else the terminal's hangup
 * alone (`hangup`: what ignores SIGHUP or left the session survives).
 */
char *
terret_ssh_channel_build_command (const char * const *argv,
                                  const char * const *envp,
                                  const char         *cwd,
                                  const char         *remote_launcher)
{
  GString *command = g_string_new (NULL);

  g_string_append_printf (command, "stty rows %d cols %d 2>/dev/null; ",
                          REMOTE_ROWS, REMOTE_COLUMNS);
  if (cwd != NULL)
    {
      g_string_append (command, "cd -- ");
      append_quoted (command, cwd);
      g_string_append_printf (command, " || exit %d; ", TERRET_SSH_NO_DIRECTORY_STATUS);
    }

  if (remote_launcher == NULL)
    {
      g_string_append (command, "L=$(command -v terret-launcher 2>/dev/null) || L=; ");
      for (guint i = 0; i < G_N_ELEMENTS (launcher_dirs); i++)
        g_string_append_printf (command, "[ -n \"$L\" ] || ! [ -x %1$s/terret-launcher ] || "
                                "L=%1$s/terret-launcher; ", launcher_dirs[i]);
    }
  else if (g_strcmp0 (remote_launcher, "none") == 0)
    g_string_append (command, "L=; ");
  else
    {
      g_string_append (command, "L=");
      append_quoted (command, remote_launcher);
      g_string_append_printf (command, "; [ -x \"$L\" ] || exit %d; ", TERRET_SSH_NO_LAUNCHER_STATUS);
    }

  g_string_append (command, "if [ -n \"$L\" ]; then exec \"$L\" --supervise");
  append_words (command, "launcher", envp, argv);
  /* The namespace's init is a sh that waits for the shell; a sh around
   * the namespace turns a status past 128 back into the signal it stands
   * for, so that a killed shell is reported killed. */
  g_string_append (command, "; fi; "
                            "if unshare --pid --fork --kill-child --mount-proc true 2>/dev/null; then "
                            "exec sh -c 'unshare --pid --fork --kill-child --mount-proc sh -c '\\''\"$@\"; "
                            "exit $?'\\'' sh \"$@\"; s=$?; if [ $s -gt 128 ] && [ $s -lt 193 ]; "
                            "then kill -$((s - 128)) $$; fi; exit $s' sh");
  append_words (command, "pid-namespace", envp, argv);
  g_string_append (command, "; fi; exec");
  append_words (command, "hangup", envp, argv);

  return g_string_free (command, FALSE);
}

/* The launcher's limits are for the remote shell, not for the local
 * client: taken from the launcher, and set on the far side by the shell
 * itself (bash's ulimit, whose units are known: KiB for -v and -f), in
 * front of @argv, which it then becomes. Over ssh they are rlimits:
 * memory caps each process's address space, processes count the remote
 * user's. A limit the remote refuses (above its hard limit) ends the
 * connection with TERRET_SSH_NO_LIMITS_STATUS, never a shell without
 * it. */
static char **
take_limits (TerretLauncher     *launcher,
             const char * const *argv)
{
  static const struct { TerretLimits limit; const char *flag; guint64 unit; } limits[] = {
    { TERRET_LIMIT_MEMORY, "v", 1024 },
    { TERRET_LIMIT_PROCESSES, "u", 1 },
    { TERRET_LIMIT_CPU, "t", 1 },
    { TERRET_LIMIT_FILE_SIZE, "f", 1024 },
    { TERRET_LIMIT_OPEN_FILES, "n", 1 },
  };
  g_autoptr(GString) script = g_string_new (NULL);
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      guint64 value = terret_launcher_get_limit (launcher, limits[i].limit);

      if (value == 0)
        continue;
      terret_launcher_set_limit (launcher, limits[i].limit, 0);
      value = MAX (value / limits[i].unit, 1);
      /* CPU time as the local launcher sets it: SIGXCPU at the limit,
       * SIGKILL a second later. */
      g_string_append_printf (script, "ulimit -%s %" G_GUINT64_FORMAT " && ulimit -S -%s %"
                              G_GUINT64_FORMAT " && ", limits[i].flag,
                              limits[i].limit == TERRET_LIMIT_CPU ? value + 1 : value,
                              limits[i].flag, value);
    }

  if (script->len > 0)
    {
      /* A failed ulimit stops the chain before the exec; a failed exec
       * ends bash with 127 by itself, which says no shell. */
      g_string_append_printf (script, "exec \"$@\"; exit %d", TERRET_SSH_NO_LIMITS_STATUS);
      g_ptr_array_add (out, g_strdup (argv[0]));
      g_ptr_array_add (out, g_strdup ("-c"));
      g_ptr_array_add (out, g_string_free (g_steal_pointer (&script), FALSE));
      /* $0; the shell's own words follow as "$@". */
      g_ptr_array_add (out, g_strdup (argv[0]));
    }
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (out, g_strdup (argv[i]));
  g_ptr_array_add (out, NULL);

  return (char **)g_ptr_array_free (out, FALSE);
}

/* Gives up a place on a master that no client took. */
static void
leave_quietly (TerretSshMuxTicket **ticket)
{
  g_autofree char *said = NULL;

  if (*ticket == NULL)
    return;
  terret_ssh_mux_ticket_leave (*ticket, &said);
  g_clear_pointer (ticket, terret_ssh_mux_ticket_unref);
}

static gboolean
terret_ssh_channel_spawn (TerretShellChannel  *channel,
                          TerretLauncher      *launcher,
                          const char * const  *argv,
                          GError             **error)
{
  TerretSshChannel *self = TERRET_SSH_CHANNEL (channel);
  g_autoptr(GPtrArray) client = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(TerretProcess) process = NULL;
  g_auto(GStrv) remote_env = NULL;
  g_auto(GStrv) local_env = NULL;
  g_autofree char *remote_cwd = NULL;
  g_autofree char *command = NULL;
  g_autofree char *remote_launcher = NULL;
  g_auto(GStrv) remote_argv = NULL;
  g_auto(GStrv) master_argv = NULL;
  g_auto(GStrv) wrapped = NULL;
  g_autoptr(TerretSshMux) mux = NULL;
  g_autoptr(TerretSshMuxTicket) ticket = NULL;
  const char * const *spawned;
  const char *term;
  int to_client[2], from_client[2];
  int stderr_fd, stderr_copy = -1;

  g_mutex_lock (&self->mutex);
  for (guint i = 0; self->client_argv != NULL && self->client_argv[i] != NULL; i++)
    g_ptr_array_add (client, g_strdup (self->client_argv[i]));
  master_argv = g_strdupv (self->master_argv);
  mux = self->mux != NULL ? terret_ssh_mux_ref (self->mux) : NULL;
  remote_launcher = g_strdup (self->remote_launcher);
  self->failure = TERRET_SSH_FAILURE_NONE;
  g_clear_pointer (&self->said, g_free);
  g_mutex_unlock (&self->mutex);

  if (client->len == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           "No ssh client is configured for this channel");
      return FALSE;
    }

  /* What the launcher holds is the remote shell's environment and cwd;
   * they go over the wire in the command. The client itself runs in the
   * host's environment (its agent socket, its HOME for ~/.ssh), and
   * announces TERM for the remote terminal before the shell starts. */
  remote_env = g_strdupv ((char **)terret_launcher_get_environ (launcher));
  remote_cwd = g_strdup (terret_launcher_get_cwd (launcher));
  remote_argv = take_limits (launcher, argv);
  command = terret_ssh_channel_build_command ((const char * const *)remote_argv,
                                              (const char * const *)remote_env, remote_cwd,
                                              remote_launcher);
  g_ptr_array_add (client, g_steal_pointer (&command));
  g_ptr_array_add (client, NULL);

  local_env = g_get_environ ();
  term = g_environ_getenv (remote_env, "TERM");
  if (term != NULL)
    local_env = g_environ_setenv (local_env, "TERM", term, TRUE);
  terret_launcher_set_environ (launcher, (const char * const *)local_env);
  terret_launcher_set_cwd (launcher, NULL);

  /* A place on a master first, which may start one with this launcher:
   * the same environment, no cwd, no limits (they were taken). */
  spawned = (const char * const *)client->pdata;
  if (mux != NULL)
    {
      ticket = terret_ssh_mux_join (mux, launcher, (const char * const *)master_argv, error);
      if (ticket == NULL)
        return FALSE;
      wrapped = terret_ssh_mux_ticket_wrap (ticket, spawned);
      spawned = (const char * const *)wrapped;
    }

  stderr_fd = terret_ssh_diagnostics_new (&stderr_copy, error);
  if (stderr_fd < 0)
    {
      leave_quietly (&ticket);
      return FALSE;
    }
  if (!g_unix_open_pipe (to_client, FD_CLOEXEC, NULL))
    {
      int saved_errno = errno;

      close (stderr_fd);
      close (stderr_copy);
      leave_quietly (&ticket);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not set up the ssh client's streams: %s", g_strerror (saved_errno));
      return FALSE;
    }
  if (!g_unix_open_pipe (from_client, FD_CLOEXEC, NULL))
    {
      int saved_errno = errno;

      close (stderr_fd);
      close (stderr_copy);
      close (to_client[0]);
      close (to_client[1]);
      leave_quietly (&ticket);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not set up the ssh client's streams: %s", g_strerror (saved_errno));
      return FALSE;
    }

  /* Plain pipes for stdin and stdout: with -tt the client needs no local
   * terminal, and having none it leaves nothing in raw mode behind. Its
   * stderr carries only its own messages (the remote side's is on the
   * remote terminal), kept in memory to explain a failed connection. */
  terret_launcher_take_fd (launcher, to_client[0], 0);
  terret_launcher_take_fd (launcher, from_client[1], 1);
  terret_launcher_take_fd (launcher, stderr_copy, 2);
  if (ticket != NULL)
    terret_launcher_take_fd (launcher, terret_ssh_mux_ticket_steal_wrapper_fd (ticket), 3);
  process = terret_launcher_spawn (launcher, spawned, error);
  if (process == NULL)
    {
      close (stderr_fd);
      close (to_client[1]);
      close (from_client[0]);
      leave_quietly (&ticket);
      return FALSE;
    }

  /* The launcher is the pool's to start masters with from now on. */
  if (ticket != NULL)
    terret_ssh_mux_ticket_start (ticket, launcher, dup (stderr_fd));

  g_mutex_lock (&self->mutex);
  if (self->stderr_fd >= 0)
    close (self->stderr_fd);
  self->stderr_fd = stderr_fd;
  g_assert (self->ticket == NULL);
  self->ticket = g_steal_pointer (&ticket);
  g_mutex_unlock (&self->mutex);

  terret_shell_channel_set_process (channel, process, from_client[0], to_client[1]);
  return TRUE;
}

/* --- Ending ------------------------------------------------------------ */

/* Whether the client closed its stdout: it does that once the remote
 * side has ended, just before it exits. */
static gboolean
client_is_leaving (TerretShellChannel *channel)
{
  struct pollfd pfd = { terret_shell_channel_get_read_fd (channel), POLLIN, 0 };

  if (pfd.fd < 0)
    return FALSE;
  return poll (&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR)) != 0;
}

static void
terret_ssh_channel_terminate (TerretShellChannel *channel)
{
  TerretSshChannel *self = TERRET_SSH_CHANNEL (channel);
  g_autoptr(TerretSshMuxTicket) ticket = NULL;
  g_autofree char *text = NULL;
  g_autofree char *said = NULL;
  TerretSshFailure failure;
  int wait_status = 0;
  int exit_status = -1;
  int fd;

  TerretProcess *process = terret_shell_channel_get_process (channel);

  /* A client that closed its stdout is on its way out: its status (the
   * remote command's) must not be lost to the kill. */
  if (process != NULL && client_is_leaving (channel))
    terret_process_wait_exited (process, LEAVING_GRACE_MSEC);

  /* Kills, closes and waits; the client's messages are complete after. */
  TERRET_SHELL_CHANNEL_CLASS (terret_ssh_channel_parent_class)->terminate (channel);

  g_mutex_lock (&self->mutex);
  fd = self->stderr_fd;
  self->stderr_fd = -1;
  ticket = g_steal_pointer (&self->ticket);
  g_mutex_unlock (&self->mutex);

  text = terret_ssh_read_diagnostics (fd);
  if (fd >= 0)
    close (fd);

  /* 255 is how the client says that it failed; anything else it exits
   * with is the remote command's status. A client we killed has none. */
  if (process != NULL && terret_process_get_exited (process, &wait_status) && WIFEXITED (wait_status))
    exit_status = WEXITSTATUS (wait_status);
  failure = terret_ssh_classify (text, exit_status, &said);

  /* A client that had no master, or lost it, has nothing to say: the
   * master does. */
  if (ticket != NULL)
    {
      g_autofree char *master_said = NULL;
      TerretSshFailure master_failure = terret_ssh_mux_ticket_leave (ticket, &master_said);

      if (failure == TERRET_SSH_FAILURE_NONE && master_failure != TERRET_SSH_FAILURE_NONE)
        {
          failure = master_failure;
          g_free (said);
          said = g_steal_pointer (&master_said);
        }
    }

  g_mutex_lock (&self->mutex);
  self->failure = failure;
  g_free (self->said);
  self->said = g_steal_pointer (&said);
  g_mutex_unlock (&self->mutex);
}

/* The client exits with the remote command's status, or 255: its own
 * failure, or a remote shell killed by a signal, which the client cannot
 * tell apart. */
static gboolean
terret_ssh_channel_get_shell_end (TerretShellChannel *channel,
                                  int                *wait_status)
{
  TerretProcess *process = terret_shell_channel_get_process (channel);
  int status = 0;

  if (process == NULL || !terret_process_get_exited (process, &status) ||
      !WIFEXITED (status) || WEXITSTATUS (status) == 255)
    return FALSE;

  *wait_status = status;
  return TRUE;
}

static void
terret_ssh_channel_finalize (GObject *object)
{
  TerretSshChannel *self = TERRET_SSH_CHANNEL (object);

  if (self->stderr_fd >= 0)
    close (self->stderr_fd);
  leave_quietly (&self->ticket);
  g_clear_pointer (&self->client_argv, g_strfreev);
  g_clear_pointer (&self->master_argv, g_strfreev);
  g_clear_pointer (&self->mux, terret_ssh_mux_unref);
  g_clear_pointer (&self->remote_launcher, g_free);
  g_clear_pointer (&self->destination, g_free);
  g_clear_pointer (&self->said, g_free);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_ssh_channel_parent_class)->finalize (object);
}

static void
terret_ssh_channel_class_init (TerretSshChannelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TerretShellChannelClass *channel_class = TERRET_SHELL_CHANNEL_CLASS (klass);

  object_class->finalize = terret_ssh_channel_finalize;

  channel_class->spawn = terret_ssh_channel_spawn;
  channel_class->terminate = terret_ssh_channel_terminate;
  channel_class->get_shell_end = terret_ssh_channel_get_shell_end;
}

static void
terret_ssh_channel_class_finalize (TerretSshChannelClass *klass)
{
}

static void
terret_ssh_channel_init (TerretSshChannel *self)
{
  g_mutex_init (&self->mutex);
  self->stderr_fd = -1;
}

void
terret_ssh_channel_register (GTypeModule *module)
{
  terret_ssh_channel_register_type (module);
}

TerretShellChannel *
terret_ssh_channel_new (void)
{
  return g_object_new (TERRET_TYPE_SSH_CHANNEL, NULL);
}

/*
 * terret_ssh_channel_set_client:
 *
 * The client and its options, up to and including the destination (and
 * how messages name it), and the remote launcher to contain the shell
 * with (see terret_ssh_channel_build_command()); the remote command is
 * appended at each spawn. With @mux, the client is a multiplexing one
 * and its session goes to a master of @mux, started with @master_argv
 * (see terret_ssh_mux_join()). Takes effect at the next spawn: a
 * connection that is up keeps the options it was made with.
 */
void
terret_ssh_channel_set_client (TerretSshChannel   *self,
                               const char * const *client_argv,
                               TerretSshMux       *mux,
                               const char * const *master_argv,
                               const char         *destination,
                               const char         *remote_launcher)
{
  g_return_if_fail (TERRET_IS_SSH_CHANNEL (self));
  g_return_if_fail ((mux == NULL) == (master_argv == NULL));

  g_mutex_lock (&self->mutex);
  g_strfreev (self->client_argv);
  self->client_argv = g_strdupv ((char **)client_argv);
  g_strfreev (self->master_argv);
  self->master_argv = g_strdupv ((char **)master_argv);
  g_clear_pointer (&self->mux, terret_ssh_mux_unref);
  self->mux = mux != NULL ? terret_ssh_mux_ref (mux) : NULL;
  g_free (self->destination);
  self->destination = g_strdup (destination);
  g_free (self->remote_launcher);
  self->remote_launcher = g_strdup (remote_launcher);
  g_mutex_unlock (&self->mutex);
}

/*
 * terret_ssh_channel_settle:
 *
 * The shell answered a run: its client has its session, so whatever
 * watched its start (see terret_ssh_mux_ticket_settle()) can stop.
 */
void
terret_ssh_channel_settle (TerretSshChannel *self)
{
  g_autoptr(TerretSshMuxTicket) ticket = NULL;

  g_return_if_fail (TERRET_IS_SSH_CHANNEL (self));

  g_mutex_lock (&self->mutex);
  if (self->ticket != NULL)
    ticket = terret_ssh_mux_ticket_ref (self->ticket);
  g_mutex_unlock (&self->mutex);

  if (ticket != NULL)
    terret_ssh_mux_ticket_settle (ticket);
}

/* How messages name the far end of the connection. */
char *
terret_ssh_channel_dup_destination (TerretSshChannel *self)
{
  char *destination;

  g_return_val_if_fail (TERRET_IS_SSH_CHANNEL (self), NULL);

  g_mutex_lock (&self->mutex);
  destination = g_strdup (self->destination != NULL ? self->destination : "the remote host");
  g_mutex_unlock (&self->mutex);

  return destination;
}

/*
 * terret_ssh_channel_get_failure:
 *
 * Why the last connection ended, as far as the client said, and the line
 * of its messages that says so (@said, nullable). NONE while it is up, or
 * when it ended because it was told to or because the remote shell left.
 * NO_DIRECTORY and NO_SHELL mean something only when the shell never
 * answered its handshake (a command may well `exit 127`).
 */
TerretSshFailure
terret_ssh_channel_get_failure (TerretSshChannel  *self,
                                char             **said)
{
  TerretSshFailure failure;

  g_return_val_if_fail (TERRET_IS_SSH_CHANNEL (self), TERRET_SSH_FAILURE_NONE);

  g_mutex_lock (&self->mutex);
  failure = self->failure;
  if (said != NULL)
    *said = g_strdup (self->said);
  g_mutex_unlock (&self->mutex);

  return failure;
}
