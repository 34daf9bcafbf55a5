/* terret-ssh-executor.c: one persistent remote bash per session key, over
 * the OpenSSH client
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <gio/gio.h>
#include <terret-exec.h>

#include "terret-ssh-channel.h"

/*
 * TerretSshExecutor:
 *
 * The `ssh` backend: one bash per session key on a remote host, started
 * on first use by `ssh -tt HOST 'exec env ... bash --norc --noprofile
 * --noediting -s'` and kept for every later run of that key, so `cd` and
 * `export` persist as in a terminal. Everything but the channel (the
 * session table, the common settings, the protocol, timeouts and
 * restarts) is the SDK's TerretSessionExecutor.
 *
 * The sessions of an executor share a few master connections (OpenSSH's
 * ControlMaster, see TerretSshMux): a burst of sessions logs in a handful
 * of times, not once each, which sshd's MaxStartups would refuse, and a
 * session on a live connection starts without a key exchange. Each
 * session is still a client process of its own: killing it closes its
 * session on the master, sshd hangs up the remote terminal, and the
 * hangup ends the remote shell and its jobs, as a connection of its own
 * would. multiplex=false gives each session its own connection.
 *
 * The client never prompts (BatchMode=yes, which no option can undo) and
 * its failures are told apart by what it printed: connection refused or
 * timed out, authentication, a changed or unknown host key. Those fail
 * the run as TERRET_EXEC_ERROR_UNAVAILABLE with a message saying which.
 * A connection lost under a command completes that run with no status
 * and a notice; the next run reconnects.
 */
#define TERRET_TYPE_SSH_EXECUTOR (terret_ssh_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretSshExecutor, terret_ssh_executor, TERRET, SSH_EXECUTOR, TerretSessionExecutor)

#define DEFAULT_CONNECT_TIMEOUT 10
#define DEFAULT_STRICT_HOST_KEY_CHECKING "yes"

/* Dead connections are noticed within about 45 s even when nothing is
 * being sent, rather than when TCP gives up, hours later. */
#define SERVER_ALIVE_INTERVAL "15"
#define SERVER_ALIVE_COUNT_MAX "3"

struct _TerretSshExecutor
{
  TerretSessionExecutor parent_instance;

  /* Guards the settings: runs start on any thread and settings may
   * change under them. */
  GMutex mutex;
  char *host;                   /* (owned) (nullable) */
  guint port;
  char *user;                   /* (owned) (nullable) */
  char *identity_file;          /* (owned) (nullable) */
  GStrv ssh_options;            /* (owned) */
  guint connect_timeout;
  char *known_hosts;            /* (owned) (nullable) */
  char *strict_host_key_checking; /* (owned) */
  char *config_file;            /* (owned) (nullable) */
  char *remote_launcher;        /* (owned) (nullable) NULL: auto */
  gboolean multiplex;

  TerretSshMux *mux;            /* (owned) the masters the sessions share */
};

/* Everything but the channel and the explanation of a run's outcome is
 * the base class's, customized through its virtual methods only: a
 * module is loaded more than once in a process, and GType refuses an
 * interface added again to a type that has it. */
G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretSshExecutor, terret_ssh_executor, TERRET_TYPE_SESSION_EXECUTOR,
                                G_TYPE_FLAG_FINAL, {})

enum {
  PROP_0,
  PROP_HOST,
  PROP_PORT,
  PROP_USER,
  PROP_IDENTITY_FILE,
  PROP_SSH_OPTIONS,
  PROP_CONNECT_TIMEOUT,
  PROP_KNOWN_HOSTS,
  PROP_STRICT_HOST_KEY_CHECKING,
  PROP_CONFIG_FILE,
  PROP_REMOTE_LAUNCHER,
  PROP_MULTIPLEX,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* --- The client's command line ----------------------------------------- */

typedef struct
{
  char *host;
  guint port;
  char *user;
  char *identity_file;
  GStrv ssh_options;
  guint connect_timeout;
  char *known_hosts;
  char *strict_host_key_checking;
  char *config_file;
  char *remote_launcher;
  gboolean multiplex;
} Settings;

static void
settings_clear (Settings *settings)
{
  g_clear_pointer (&settings->host, g_free);
  g_clear_pointer (&settings->user, g_free);
  g_clear_pointer (&settings->identity_file, g_free);
  g_clear_pointer (&settings->ssh_options, g_strfreev);
  g_clear_pointer (&settings->known_hosts, g_free);
  g_clear_pointer (&settings->strict_host_key_checking, g_free);
  g_clear_pointer (&settings->config_file, g_free);
  g_clear_pointer (&settings->remote_launcher, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Settings, settings_clear)

static void
settings_snapshot (TerretSshExecutor *self,
                   Settings          *settings)
{
  g_mutex_lock (&self->mutex);
  settings->host = g_strdup (self->host);
  settings->port = self->port;
  settings->user = g_strdup (self->user);
  settings->identity_file = g_strdup (self->identity_file);
  settings->ssh_options = g_strdupv (self->ssh_options);
  settings->connect_timeout = self->connect_timeout;
  settings->known_hosts = g_strdup (self->known_hosts);
  settings->strict_host_key_checking = g_strdup (self->strict_host_key_checking);
  settings->config_file = g_strdup (self->config_file);
  settings->remote_launcher = g_strdup (self->remote_launcher);
  settings->multiplex = self->multiplex;
  g_mutex_unlock (&self->mutex);
}

/* A value ssh's option parser takes as one word even with spaces in it. */
static char *
option_value (const char *value)
{
  if (strpbrk (value, " \t") == NULL)
    return g_strdup (value);
  return g_strdup_printf ("\"%s\"", value);
}

static void
add_option (GPtrArray  *argv,
            const char *name,
            const char *value)
{
  g_autofree char *quoted = option_value (value);

  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup_printf ("%s=%s", name, quoted));
}

/* Which client a command line is for. */
typedef enum {
  CLIENT_OWN_CONNECTION,        /* a session's, logging in itself */
  CLIENT_MULTIPLEXED,           /* a session's, on a master of the pool */
  CLIENT_MASTER,                /* a master's: a connection, no session */
} ClientRole;

/* Checks the settings and builds the client's command line up to and
 * including the destination. For ssh the first value given for an option
 * wins, so the order is the policy: what must hold (never prompt, and
 * for the pool's clients how they multiplex), then the settings, then
 * the user's own ssh-options, then defaults those options may
 * override. */
static GStrv
build_client_argv (const Settings  *settings,
                   ClientRole       role,
                   char           **destination,
                   GError         **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  const char *strict = settings->strict_host_key_checking;

  if (settings->host == NULL || *settings->host == '\0')
    {
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                           "no host configured: set “host” in the [ssh] group of "
                           "executor.conf, or pass --set host=NAME");
      return NULL;
    }
  /* ssh would read these as options, not as a host or a user. */
  if (settings->host[0] == '-' || strpbrk (settings->host, " \t\n") != NULL)
    {
      terret_exec_error_set_invalid_setting (error, "host", settings->host, "not a host name");
      return NULL;
    }
  if (settings->user != NULL && (settings->user[0] == '-' || strpbrk (settings->user, " \t\n@") != NULL))
    {
      terret_exec_error_set_invalid_setting (error, "user", settings->user, "not a user name");
      return NULL;
    }
  if (g_strcmp0 (strict, "yes") != 0 && g_strcmp0 (strict, "accept-new") != 0 &&
      g_strcmp0 (strict, "no") != 0)
    {
      terret_exec_error_set_invalid_setting (error, "strict-host-key-checking", strict != NULL ? strict : "",
                       "expected yes, accept-new or no");
      return NULL;
    }
  /* ssh only warns about a key it cannot read, then fails to log in
   * with a message that hides why. */
  if (settings->identity_file != NULL &&
      !g_file_test (settings->identity_file, G_FILE_TEST_IS_REGULAR))
    {
      terret_exec_error_set_invalid_setting (error, "identity-file", settings->identity_file, "no such file");
      return NULL;
    }
  for (guint i = 0; settings->ssh_options != NULL && settings->ssh_options[i] != NULL; i++)
    {
      const char *option = settings->ssh_options[i];

      if (*option == '\0' || *option == '-' || strpbrk (option, "= \t") == NULL)
        {
          terret_exec_error_set_invalid_setting (error, "ssh-options", option,
                           "expected an ssh_config option as Name=value, such as Compression=yes");
          return NULL;
        }
    }

  g_ptr_array_add (argv, g_strdup ("ssh"));
  if (role == CLIENT_MASTER)
    {
      /* A master and nothing else, in the foreground: its unit is its
       * lifetime, and its stdout closing says it is up (ControlPersist
       * would put it in the background). The pool adds its path. */
      g_ptr_array_add (argv, g_strdup ("-M"));
      g_ptr_array_add (argv, g_strdup ("-N"));
      add_option (argv, "ControlPersist", "no");
    }
  else
    {
      /* A remote terminal, forced: the client has none of its own. No
       * escape character: a request must reach the remote bash byte for
       * byte. */
      g_ptr_array_add (argv, g_strdup ("-tt"));
      g_ptr_array_add (argv, g_strdup ("-e"));
      g_ptr_array_add (argv, g_strdup ("none"));
    }
  /* A client of the pool's master, never one itself, whatever ssh_config
   * or ssh-options say; the pool adds the master's path. */
  if (role == CLIENT_MULTIPLEXED)
    add_option (argv, "ControlMaster", "no");
  add_option (argv, "BatchMode", "yes");

  if (settings->config_file != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("-F"));
      g_ptr_array_add (argv, g_strdup (settings->config_file));
    }
  if (settings->port != 0)
    {
      g_ptr_array_add (argv, g_strdup ("-p"));
      g_ptr_array_add (argv, g_strdup_printf ("%u", settings->port));
    }
  if (settings->user != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("-l"));
      g_ptr_array_add (argv, g_strdup (settings->user));
    }
  if (settings->identity_file != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("-i"));
      g_ptr_array_add (argv, g_strdup (settings->identity_file));
    }
  if (settings->connect_timeout > 0)
    {
      g_autofree char *seconds = g_strdup_printf ("%u", settings->connect_timeout);

      add_option (argv, "ConnectTimeout", seconds);
    }
  add_option (argv, "StrictHostKeyChecking", strict);
  if (settings->known_hosts != NULL)
    add_option (argv, "UserKnownHostsFile", settings->known_hosts);

  for (guint i = 0; settings->ssh_options != NULL && settings->ssh_options[i] != NULL; i++)
    {
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup (settings->ssh_options[i]));
    }

  /* With a key named, only that key: agents and default keys offered
   * first can exhaust the server's MaxAuthTries before it. */
  if (settings->identity_file != NULL)
    add_option (argv, "IdentitiesOnly", "yes");
  /* A ControlMaster from ssh_config would leave a master process behind
   * every session (the pool's clients said theirs above); forwardings
   * from it would be set up once per session, or held by a master for
   * none. */
  if (role == CLIENT_OWN_CONNECTION)
    add_option (argv, "ControlMaster", "no");
  add_option (argv, "ClearAllForwardings", "yes");
  add_option (argv, "ServerAliveInterval", SERVER_ALIVE_INTERVAL);
  add_option (argv, "ServerAliveCountMax", SERVER_ALIVE_COUNT_MAX);
  /* Errors only: notices such as "Connection to HOST closed." are not
   * worth a line in what a command printed or in an error. */
  add_option (argv, "LogLevel", "ERROR");

  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup (settings->host));
  g_ptr_array_add (argv, NULL);

  if (destination != NULL)
    {
      g_autoptr(GString) name = g_string_new (NULL);

      if (settings->user != NULL)
        g_string_append_printf (name, "%s@", settings->user);
      g_string_append (name, settings->host);
      if (settings->port != 0)
        g_string_append_printf (name, " port %u", settings->port);
      *destination = g_string_free (g_steal_pointer (&name), FALSE);
    }

  return (GStrv)g_ptr_array_free (g_steal_pointer (&argv), FALSE);
}

/* --- TerretSessionExecutor -------------------------------------------- */

static TerretShellChannel *
terret_ssh_executor_create_channel (TerretSessionExecutor  *executor,
                                    const char             *session_key,
                                    GError                **error)
{
  return terret_ssh_channel_new ();
}

/* The remote shell's environment is the remote account's own, plus the
 * session defaults (TERM=dumb, PAGER=cat, ...) and the env setting on
 * top. The host's environment stays here: its PATH, HOME and secrets
 * mean nothing on the remote host, and are not the remote host's to
 * see. */
static gboolean
terret_ssh_executor_prepare_spawn (TerretSessionExecutor  *executor,
                                   const char             *session_key,
                                   TerretShellChannel     *channel,
                                   TerretLauncher         *launcher,
                                   double                 *handshake_timeout,
                                   GError                **error)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (executor);
  g_auto(Settings) settings = { 0 };
  g_auto(GStrv) client_argv = NULL;
  g_auto(GStrv) master_argv = NULL;
  g_auto(GStrv) envp = NULL;
  g_autofree char *destination = NULL;

  g_return_val_if_fail (TERRET_IS_SSH_CHANNEL (channel), FALSE);

  settings_snapshot (self, &settings);
  client_argv = build_client_argv (&settings,
                                   settings.multiplex ? CLIENT_MULTIPLEXED : CLIENT_OWN_CONNECTION,
                                   &destination, error);
  if (client_argv == NULL)
    return FALSE;
  if (settings.multiplex)
    master_argv = build_client_argv (&settings, CLIENT_MASTER, NULL, error);

  {
    TerretSandbox sandbox;
    TerretNetwork network;

    /* A sandbox here would hold the client, not the remote shell (and
     * with the network off, no connection at all): refused, never run
     * with less than was asked. */
    g_object_get (self, "sandbox", &sandbox, "network", &network, NULL);
    if (sandbox != TERRET_SANDBOX_NONE || network == TERRET_NETWORK_OFF)
      {
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                     "The ssh backend cannot sandbox the remote shell: sandbox and network "
                     "hold for shells on this host; set sandbox=none and network=default");
        return FALSE;
      }
  }

  envp = terret_session_executor_dup_environ (executor, FALSE, error);
  if (envp == NULL)
    return FALSE;
  for (guint i = 0; envp[i] != NULL; i++)
    {
      const char *eq = strchr (envp[i], '=');

      /* The remote `env` would take anything else for the command. */
      if (!terret_shell_is_variable_name (envp[i], eq - envp[i]))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "The environment entry “%s” does not name a shell variable, so it "
                       "cannot be passed to the remote shell", envp[i]);
          return FALSE;
        }
    }

  terret_ssh_channel_set_client (TERRET_SSH_CHANNEL (channel),
                                 (const char * const *)client_argv,
                                 settings.multiplex ? self->mux : NULL,
                                 (const char * const *)master_argv, destination,
                                 settings.remote_launcher);
  terret_launcher_set_environ (launcher, (const char * const *)envp);
  /* The handshake of a new session includes connecting and logging in,
   * which has connect-timeout of its own; the shell then has the usual
   * handshake budget to answer. */
  *handshake_timeout += settings.connect_timeout;

  return TRUE;
}

static gboolean
terret_ssh_executor_check_available (TerretSessionExecutor  *executor,
                                     GCancellable           *cancellable,
                                     GError                **error)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (executor);
  g_auto(Settings) settings = { 0 };
  g_auto(GStrv) client_argv = NULL;
  g_autofree char *ssh = NULL;

  /* No connection here: init must stay cheap and free of side effects.
   * An unconfigured host is "unavailable", so selection by priority
   * passes this backend by. */
  settings_snapshot (self, &settings);
  client_argv = build_client_argv (&settings, CLIENT_OWN_CONNECTION, NULL, error);
  if (client_argv == NULL)
    return FALSE;

  ssh = g_find_program_in_path (client_argv[0]);
  if (ssh == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The ssh backend needs the OpenSSH client: “%s” was not found in PATH",
                   client_argv[0]);
      return FALSE;
    }

  return TRUE;
}

/* --- Explaining connection failures ----------------------------------- */

static char *
describe_failure (TerretSshExecutor *self,
                  TerretSshFailure   failure,
                  const char        *destination,
                  const char        *said)
{
  g_autofree char *detail = said != NULL && *said != '\0' ? g_strdup_printf (" (ssh: %s)", said)
                                                          : g_strdup ("");

  switch (failure)
    {
    case TERRET_SSH_FAILURE_REFUSED:
      return g_strdup_printf ("Could not connect to %s: connection refused%s", destination, detail);
    case TERRET_SSH_FAILURE_TIMED_OUT:
      return g_strdup_printf ("Could not connect to %s: the connection timed out%s", destination, detail);
    case TERRET_SSH_FAILURE_UNREACHABLE:
      return g_strdup_printf ("Could not connect to %s: the host is unreachable%s", destination, detail);
    case TERRET_SSH_FAILURE_RESOLVE:
      return g_strdup_printf ("Could not connect to %s: the host name does not resolve%s",
                              destination, detail);
    case TERRET_SSH_FAILURE_AUTHENTICATION:
      return g_strdup_printf ("Could not log in to %s: authentication failed, permission denied%s",
                              destination, detail);
    case TERRET_SSH_FAILURE_HOST_KEY_CHANGED:
      return g_strdup_printf ("Refused to connect to %s: its host key does not match the one in "
                              "known_hosts (the key changed, or someone is in the middle); if the "
                              "change is expected, remove the old key with ssh-keygen -R%s",
                              destination, detail);
    case TERRET_SSH_FAILURE_HOST_KEY_UNKNOWN:
      return g_strdup_printf ("Refused to connect to %s: its host key is not in known_hosts and "
                              "strict-host-key-checking does not allow adding it%s",
                              destination, detail);
    case TERRET_SSH_FAILURE_CLOSED:
      return g_strdup_printf ("The connection to %s was closed%s", destination, detail);
    case TERRET_SSH_FAILURE_NO_DIRECTORY:
      {
        g_autofree char *cwd = NULL;

        g_object_get (self, "cwd", &cwd, NULL);
        return g_strdup_printf ("On %s: the working directory “%s” (the cwd setting) cannot be "
                                "entered", destination, cwd != NULL ? cwd : "");
      }
    case TERRET_SSH_FAILURE_NO_SHELL:
      {
        g_autofree char *shell = NULL;

        g_object_get (self, "shell", &shell, NULL);
        return g_strdup_printf ("On %s: the shell “%s” (the shell setting) was not found",
                                destination, shell != NULL ? shell : "");
      }
    case TERRET_SSH_FAILURE_NO_LAUNCHER:
      {
        g_autofree char *launcher = NULL;

        g_object_get (self, "remote-launcher", &launcher, NULL);
        return g_strdup_printf ("On %s: the launcher “%s” (the remote-launcher setting) is not an "
                                "executable file there; install terret-exec on it, or set "
                                "remote-launcher to auto or none",
                                destination, launcher != NULL ? launcher : "");
      }
    case TERRET_SSH_FAILURE_NO_SESSION:
      return g_strdup_printf ("On %s: the server refused to open a session on a connection with "
                              "no other (its MaxSessions?)%s", destination, detail);
    case TERRET_SSH_FAILURE_NO_LIMITS:
      return g_strdup_printf ("On %s: the shell could not set the limit-* settings there (a "
                              "value above the remote's hard limit?)%s", destination, detail);
    case TERRET_SSH_FAILURE_OTHER:
    case TERRET_SSH_FAILURE_NONE:
    default:
      return g_strdup_printf ("ssh to %s failed%s", destination, detail);
    }
}

/* The engine's outcome (@result, or @failed when there is none),
 * explained by what the client said: the engine only knows that its
 * shell never answered, or ended; the client knows why. A poll starts no
 * shell: its errors (nothing to poll, busy) are the engine's to tell. */
static TerretResult *
terret_ssh_executor_explain_outcome (TerretSessionExecutor  *executor,
                                     const char             *session_key,
                                     TerretShellChannel     *channel,
                                     gboolean                polled,
                                     TerretResult           *result,
                                     GError                 *failed,
                                     GError                **error)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (executor);
  g_autoptr(TerretResult) owned_result = result;
  g_autoptr(GError) owned_error = failed;
  g_autofree char *said = NULL;
  g_autofree char *destination = NULL;
  g_autofree char *message = NULL;
  TerretSshFailure failure;

  g_return_val_if_fail (TERRET_IS_SSH_CHANNEL (channel), NULL);
  g_return_val_if_fail ((result == NULL) != (failed == NULL), NULL);

  failure = terret_ssh_channel_get_failure (TERRET_SSH_CHANNEL (channel), &said);
  destination = terret_ssh_channel_dup_destination (TERRET_SSH_CHANNEL (channel));

  if (owned_result == NULL)
    {
      if (!polled && g_error_matches (owned_error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE))
        {
          if (failure != TERRET_SSH_FAILURE_NONE)
            {
              message = describe_failure (self, failure, destination, said);
              g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                                   message);
              return NULL;
            }
          /* The remote side refused to start the shell (a cwd that does
           * not exist there, no bash): the engine's message says what the
           * remote host said, and this says which host it was. */
          g_prefix_error (&owned_error, "On %s: ", destination);
        }
      g_propagate_error (error, g_steal_pointer (&owned_error));
      return NULL;
    }

  /* A shell answered: its session is on its master for good. */
  terret_ssh_channel_settle (TERRET_SSH_CHANNEL (channel));

  /* The engine says that its shell ended; the client says whether the
   * connection went with it, in which case what it exited with (255) is
   * the client's, not the command's. */
  if (TERRET_SSH_FAILURE_IS_CONNECTION (failure) && !terret_result_get_exited (owned_result) &&
      !terret_result_get_timed_out (owned_result) && !terret_result_get_running (owned_result))
    {
      message = g_strdup_printf ("The connection to %s was lost%s%s%s; the next run reconnects.",
                                 destination,
                                 said != NULL ? " (ssh: " : "",
                                 said != NULL ? said : "",
                                 said != NULL ? ")" : "");
      terret_result_add_notice (owned_result, message);
    }

  return g_steal_pointer (&owned_result);
}

/* --- GObject ---------------------------------------------------------- */

static void
terret_ssh_executor_dispose (GObject *object)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (object);

  /* The sessions first (the base closes them), then the masters they
   * were on: nothing of the executor outlives it. */
  G_OBJECT_CLASS (terret_ssh_executor_parent_class)->dispose (object);
  terret_ssh_mux_close (self->mux);
}

static void
terret_ssh_executor_finalize (GObject *object)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (object);

  g_clear_pointer (&self->mux, terret_ssh_mux_unref);

  g_clear_pointer (&self->host, g_free);
  g_clear_pointer (&self->user, g_free);
  g_clear_pointer (&self->identity_file, g_free);
  g_clear_pointer (&self->ssh_options, g_strfreev);
  g_clear_pointer (&self->known_hosts, g_free);
  g_clear_pointer (&self->strict_host_key_checking, g_free);
  g_clear_pointer (&self->config_file, g_free);
  g_clear_pointer (&self->remote_launcher, g_free);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_ssh_executor_parent_class)->finalize (object);
}

static char **
string_field (TerretSshExecutor *self,
              guint              prop_id)
{
  switch (prop_id)
    {
    case PROP_HOST:
      return &self->host;
    case PROP_USER:
      return &self->user;
    case PROP_IDENTITY_FILE:
      return &self->identity_file;
    case PROP_KNOWN_HOSTS:
      return &self->known_hosts;
    case PROP_STRICT_HOST_KEY_CHECKING:
      return &self->strict_host_key_checking;
    case PROP_CONFIG_FILE:
      return &self->config_file;
    case PROP_REMOTE_LAUNCHER:
      return &self->remote_launcher;
    default:
      return NULL;
    }
}

static void
terret_ssh_executor_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (object);
  char **field;

  g_mutex_lock (&self->mutex);
  field = string_field (self, prop_id);
  if (field != NULL)
    g_value_set_string (value, *field);
  else if (prop_id == PROP_PORT)
    g_value_set_uint (value, self->port);
  else if (prop_id == PROP_CONNECT_TIMEOUT)
    g_value_set_uint (value, self->connect_timeout);
  else if (prop_id == PROP_SSH_OPTIONS)
    g_value_set_boxed (value, self->ssh_options);
  else if (prop_id == PROP_MULTIPLEX)
    g_value_set_boolean (value, self->multiplex);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  g_mutex_unlock (&self->mutex);
}

static void
terret_ssh_executor_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (object);
  gboolean changed = TRUE;
  char **field;

  g_mutex_lock (&self->mutex);
  field = string_field (self, prop_id);
  if (field != NULL)
    {
      const char *text = g_value_get_string (value);

      /* Empty is unset; for the host-key policy, unset is the default. */
      if (text != NULL && *text == '\0')
        text = NULL;
      if (text == NULL && prop_id == PROP_STRICT_HOST_KEY_CHECKING)
        text = DEFAULT_STRICT_HOST_KEY_CHECKING;
      if (g_strcmp0 (text, "auto") == 0 && prop_id == PROP_REMOTE_LAUNCHER)
        text = NULL;
      changed = g_strcmp0 (*field, text) != 0;
      g_free (*field);
      *field = g_strdup (text);
    }
  else if (prop_id == PROP_PORT)
    {
      changed = self->port != g_value_get_uint (value);
      self->port = g_value_get_uint (value);
    }
  else if (prop_id == PROP_CONNECT_TIMEOUT)
    {
      changed = self->connect_timeout != g_value_get_uint (value);
      self->connect_timeout = g_value_get_uint (value);
    }
  else if (prop_id == PROP_MULTIPLEX)
    {
      changed = self->multiplex != g_value_get_boolean (value);
      self->multiplex = g_value_get_boolean (value);
    }
  else if (prop_id == PROP_SSH_OPTIONS)
    {
      g_strfreev (self->ssh_options);
      self->ssh_options = g_value_dup_boxed (value);
      if (self->ssh_options == NULL)
        self->ssh_options = g_new0 (char *, 1);
    }
  else
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      changed = FALSE;
    }
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

static char *
terret_ssh_executor_describe_containment (TerretSessionExecutor *executor)
{
  TerretSshExecutor *self = TERRET_SSH_EXECUTOR (executor);
  g_autofree char *launcher = NULL;
  g_autofree char *how = NULL;

  g_mutex_lock (&self->mutex);
  launcher = g_strdup (self->remote_launcher);
  g_mutex_unlock (&self->mutex);

  if (launcher == NULL)
    how = g_strdup ("under terret-launcher --supervise when the remote has it (on PATH or in "
                    "/usr{,/local}/libexec/terret-exec-1), else in a PID namespace where the "
                    "account may make one, else by the terminal's hangup alone");
  else if (strcmp (launcher, "none") == 0)
    how = g_strdup ("in a PID namespace where the account may make one, else by the "
                    "terminal's hangup alone");
  else
    how = g_strdup_printf ("under %s --supervise (a session is refused where it is missing)",
                           launcher);

  return g_strdup_printf ("on the remote host, what a session starts ends with it %s; the "
                          "remote shell's TERRET_CONTAINMENT says which held (remote-launcher). "
                          "The limit-* settings are rlimits the remote shell sets (memory as "
                          "address space, processes over the remote user's).", how);
}

static void
terret_ssh_executor_class_init (TerretSshExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TerretSessionExecutorClass *session_class = TERRET_SESSION_EXECUTOR_CLASS (klass);
  const GParamFlags flags = (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  object_class->dispose = terret_ssh_executor_dispose;
  object_class->finalize = terret_ssh_executor_finalize;
  object_class->get_property = terret_ssh_executor_get_property;
  object_class->set_property = terret_ssh_executor_set_property;

  session_class->create_channel = terret_ssh_executor_create_channel;
  session_class->prepare_spawn = terret_ssh_executor_prepare_spawn;
  session_class->check_available = terret_ssh_executor_check_available;
  session_class->explain_outcome = terret_ssh_executor_explain_outcome;
  session_class->describe_containment = terret_ssh_executor_describe_containment;

  properties[PROP_HOST] =
    g_param_spec_string ("host", NULL,
                         "The remote host (a name, an address, or a Host alias of the ssh "
                         "configuration); required",
                         NULL, flags);
  properties[PROP_PORT] =
    g_param_spec_uint ("port", NULL,
                       "The remote port (0: the ssh configuration's, normally 22)",
                       0, 65535, 0, flags);
  properties[PROP_USER] =
    g_param_spec_string ("user", NULL,
                         "The remote user (unset: the ssh configuration's, normally the local "
                         "user's name)",
                         NULL, flags);
  properties[PROP_IDENTITY_FILE] =
    g_param_spec_string ("identity-file", NULL,
                         "The private key to log in with; when set, only this key is offered "
                         "(unset: the agent's and the default keys)",
                         NULL, flags);
  properties[PROP_SSH_OPTIONS] =
    g_param_spec_boxed ("ssh-options", NULL,
                        "Extra ssh_config options as Name=value, passed with -o (BatchMode and "
                        "the settings above cannot be overridden)",
                        G_TYPE_STRV, flags);
  properties[PROP_CONNECT_TIMEOUT] =
    g_param_spec_uint ("connect-timeout", NULL,
                       "Seconds a new session may take to connect (0: the system's TCP "
                       "timeout); added to handshake-timeout for its start",
                       0, 3600, DEFAULT_CONNECT_TIMEOUT, flags);
  properties[PROP_KNOWN_HOSTS] =
    g_param_spec_string ("known-hosts", NULL,
                         "The known_hosts file host keys are checked against (unset: "
                         "~/.ssh/known_hosts)",
                         NULL, flags);
  properties[PROP_STRICT_HOST_KEY_CHECKING] =
    g_param_spec_string ("strict-host-key-checking", NULL,
                         "What to do with a host key not in known_hosts: yes (refuse), "
                         "accept-new (add it; a changed key is refused) or no (add it, and "
                         "connect even to a host whose key changed: unsafe)",
                         DEFAULT_STRICT_HOST_KEY_CHECKING, flags);
  properties[PROP_CONFIG_FILE] =
    g_param_spec_string ("config-file", NULL,
                         "The ssh configuration file (unset: ~/.ssh/config and the system's; "
                         "none: no configuration file)",
                         NULL, flags);

  properties[PROP_REMOTE_LAUNCHER] =
    g_param_spec_string ("remote-launcher", NULL,
                         "How the remote shell and what it starts are contained: auto (under "
                         "terret-launcher when the remote has it on PATH or in "
                         "/usr{,/local}/libexec/terret-exec-1, else in a PID namespace where "
                         "the account may make one, else by the terminal's hangup alone), none "
                         "(no launcher), or the launcher's path on the remote; the remote "
                         "shell's TERRET_CONTAINMENT says which was used",
                         NULL, flags);

  properties[PROP_MULTIPLEX] =
    g_param_spec_boolean ("multiplex", NULL,
                          "Whether the sessions share a few master connections (OpenSSH's "
                          "ControlMaster, at most 8 sessions on each), opened on first use and "
                          "closed with the executor; false: each session logs in on a connection "
                          "of its own",
                          TRUE, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
terret_ssh_executor_class_finalize (TerretSshExecutorClass *klass)
{
}

static void
terret_ssh_executor_init (TerretSshExecutor *self)
{
  g_mutex_init (&self->mutex);
  self->ssh_options = g_new0 (char *, 1);
  self->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  self->strict_host_key_checking = g_strdup (DEFAULT_STRICT_HOST_KEY_CHECKING);
  self->multiplex = TRUE;
  self->mux = terret_ssh_mux_new ();
}

/* --- Module ------------------------------------------------------------ */

static void
ssh_module_load (GTypeModule *module)
{
  terret_ssh_channel_register (module);
  terret_ssh_executor_register_type (module);
  /* Low: a remote host is never what a caller who named no backend
   * expects, and without a host configured this one is unavailable. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_ssh_executor_get_type (), "ssh", 10);
}

TERRET_DEFINE_BACKEND_MODULE (ssh_module_load)
