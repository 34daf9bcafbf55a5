/* terret-shell-session.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <glib-unix.h>

#include "terret-capture.h"
#include "terret-error.h"
#include "terret-shell-session.h"
#include "terret-util-private.h"

/**
 * TerretShellSession:
 *
 * One persistent bash, carried by a [class@Terret.ShellChannel], that
 * runs command after command so that `cd` and `export` from one run are
 * visible to the next, exactly as in a terminal.
 *
 * The session owns the protocol; the channel only carries bytes, so a
 * remote backend reuses all of it by supplying a channel:
 *
 * - The shell is `bash --norc --noprofile --noediting -s` on a terminal,
 *   spawned on the first run and answered by a start-up handshake
 *   (history off, job control off, no prompts). A shell that cannot be
 *   started or does not answer within the handshake timeout is reaped and
 *   reported as %TERRET_EXEC_ERROR_UNAVAILABLE.
 * - Each run is one request line that bash parses whole before running
 *   anything: the command, quoted for `builtin eval`, then a
 *   `builtin printf` of a marker carrying a fresh random sentinel, the
 *   command's status and the shell's cwd. A command that reads stdin sees
 *   none of the protocol, and the command cannot forge the marker.
 * - Output is the terminal's bytes exactly, up to the max-output cap:
 *   past it the head is kept (cut on a whole UTF-8 character), reading
 *   goes on to the marker so the status is never lost, and the notice
 *   says how much was dropped.
 * - A second run while one is in flight is refused
 *   (%TERRET_EXEC_ERROR_BUSY), never queued. A timeout or a cancellation
 *   interrupts the command and kills the shell with everything it
 *   started; so does the shell ending under a command. The next run then
 *   starts a fresh shell, and the results say so.
 *
 * Runs are asynchronous on the caller's thread-default main context. An
 * idle session holds no source at all, so it costs no wakeups; a session
 * can be driven from different threads one run at a time.
 *
 * Since: 0.1
 */

/* 16 random bytes as hex: 128 bits a command cannot guess. */
#define SENTINEL_BYTES 16
#define SENTINEL_LEN (SENTINEL_BYTES * 2)
#define SENTINEL_HALF (SENTINEL_LEN / 2)
/* A marker begins with a NUL, then the sentinel. Output is held back
 * while its tail could be the beginning of a marker; with the NUL first,
 * only output that ends in a NUL can, so what a command prints (a prompt
 * ending in a digit or a hex letter, say) reaches a poll at once instead
 * of waiting for bytes that never come. */
#define MARKER_LEAD_LEN (SENTINEL_LEN + 1)

/* What one read takes from the terminal. */
#define READ_CHUNK (64 * 1024)

/* A status is at most 255; more digits than this cannot be one. */
#define STATUS_MAX_DIGITS 3

/* A cwd longer than this after a sentinel is taken for output rather than
 * held back forever: PATH_MAX is 4096, and a $PWD built by relative `cd`s
 * past it is the only way to get near this. */
#define CWD_MAX (64 * 1024)

/* What the handshake keeps of the shell's chatter, for the error message
 * of a shell that never answers. */
#define HANDSHAKE_OUTPUT_LIMIT 4096

/* Bytes sitting on the terminal between two runs belong to whatever wrote
 * them (a background job, a job-control notice), never to the next
 * command, so they are drained before it starts. The budget only bounds
 * the pathological case, a background job printing without pause: what
 * it still prints after the budget lands in the next run's output, the
 * same thing a human sees when a job prints over their next command. */
#define DRAIN_BUDGET_USEC (100 * 1000)

/* Once the shell has ended, output it wrote just before may still be in
 * flight through the terminal; it is read until the terminal reports its
 * end, or for this long when a background job still holds the terminal
 * open (`sleep 100 & exit` must end the run at once, not in 100 s). */
#define EXIT_GRACE_MSEC 100

/* How long a closing session gets to leave on its own before the whole
 * process group is SIGKILLed. An interactive bash ignores SIGTERM, so
 * asking with `exit` is the one cheap, clean way out; it is bounded
 * because a shell that is stuck never reads the request at all. */
#define FAREWELL_MSEC 1000

/* ETX: a human's ^C. The terminal turns it into SIGINT for its foreground
 * process group, which with job control off is the session's own, so it
 * reaches the command's children as well as bash. */
#define INTERRUPT_BYTE 0x03

/* `--noediting` is load-bearing: on a terminal bash is interactive, and
 * readline echoes what it reads whatever the terminal's echo flag says.
 * Without line editing the echo is the terminal's, which is off.
 * `--norc --noprofile` keep a user's dotfiles from deciding what the
 * session prints. `-s` reads commands from the terminal. */
static const char * const shell_flags[] = {
  "--norc", "--noprofile", "--noediting", "-s", NULL
};

/* Run once per shell, before any command, through the same framing as a
 * command.
 *
 * `set +m` turns job control off, and that is a disposal decision: with
 * it on, bash gives every job a process group of its own that nothing
 * here would ever learn; with it off every child stays in the group bash
 * leads, which one signal ends as a unit. The cost, stated: no `fg`,
 * `bg` or `%1`. bash still prints "[1] 1234" when a job is backgrounded,
 * and that line is reported like anything else the shell says.
 *
 * `+o history` and `history -c` keep the sentinel halves of every
 * request out of the history list (the handshake's own line was added
 * before it ran, hence the clear), and with HISTFILE unset bash never
 * writes the user's history file, not even on SIGHUP. `+H` turns off `!`
 * expansion, which would otherwise rewrite request lines.
 *
 * Empty prompts, so nothing is printed between the marker and the next
 * request; PROMPT_COMMAND unset for the same reason. */
static const char handshake_script[] =
  "\\builtin set +m +H +o history; \\builtin history -c; "
  "\\builtin unset HISTFILE PROMPT_COMMAND; PS0=''; PS1=''; PS2=''";

/* For a channel that cannot set the terminal's modes from the host side
 * (a remote pty behind ssh): the same modes, once, from inside. Failure
 * is tolerated: without a terminal there is nothing to configure, and
 * bash is then non-interactive, which needs none of it. */
static const char handshake_stty[] =
  "\\command stty -echo -onlcr -icanon -ixon -ixoff min 1 time 0 2>/dev/null; ";

/* The defaults that keep a host with no human at the terminal from
 * hanging in a pager or drowning in escape codes. The env setting (an
 * overlay) goes on top of them. */
static const char * const default_environ[] = {
  "TERM=dumb",
  "PAGER=cat",
  "GIT_PAGER=cat",
  "MANPAGER=cat",
  "SYSTEMD_PAGER=cat",
  "GH_PAGER=cat",
  "NO_COLOR=1",
  NULL
};

typedef enum {
  PHASE_HANDSHAKE,
  PHASE_COMMAND,
} Phase;

typedef enum {
  MARKER_INCOMPLETE,
  MARKER_INVALID,
  MARKER_FOUND,
} MarkerParse;

typedef struct _Run Run;

struct _TerretShellSession
{
  GObject parent_instance;

  TerretShellChannel *channel;  /* (owned) */

  /* READ_CHUNK bytes for the run in flight (there is at most one), kept
   * across runs: a fresh 64 KiB per run cost a heap trim and page faults
   * on every round trip. */
  guint8 *read_buffer;          /* (owned) (nullable) */

  /* Guards everything below: runs, closes and settings may come from
   * different threads. Never held across I/O. */
  GMutex mutex;
  char *shell;                  /* (owned) */
  GStrv environ;                /* (owned) (nullable) */
  char *cwd;                    /* (owned) (nullable) */
  guint64 max_output;
  double handshake_timeout;
  double interrupt_grace;
  char *pending_notice;         /* (owned) (nullable) for the next run */
  /* The run in flight or the detached command, for input, interrupts
   * and polls; its fields are the thread of its main context's. */
  Run *run;                     /* (unowned) (nullable) */
  /* The end of a detached command that nobody polled yet. */
  TerretResult *parked;         /* (owned) (nullable) */
  guint busy : 1;
  guint close_requested : 1;
};

struct _Run
{
  TerretShellSession *session;  /* (owned) */
  GTask *task;                  /* (owned) */
  TerretRequest *request;       /* (owned) */
  GMainContext *context;        /* (owned) */
  GCancellable *cancellable;    /* (owned) (nullable) */

  Phase phase;
  TerretTimeoutAction timeout_action;
  double timeout;               /* the command's */
  double interrupt_grace;
  double exchange_timeout;      /* the current exchange's */
  guint64 max_output;
  GString *notices;             /* (owned) */

  char sentinel[SENTINEL_LEN + 1];
  guint8 lead[MARKER_LEAD_LEN]; /* NUL, then the sentinel */
  GByteArray *out;              /* (owned) the request still to write */
  gsize out_pos;

  /* Bytes read but not yet known to be output: a tail that may be the
   * beginning of the marker, or a marker still arriving. */
  GByteArray *hold;             /* (owned) */
  TerretHeadCapture *capture;   /* (owned) confirmed output */

  int status;
  char *cwd;                    /* (owned) (nullable) from the marker */

  GSource *read_source;         /* (owned) (nullable) */
  GSource *write_source;        /* (owned) (nullable) */
  GSource *exit_source;         /* (owned) (nullable) */
  GSource *grace_source;        /* (owned) (nullable) */
  GSource *timeout_source;      /* (owned) (nullable) */
  GSource *cancel_source;       /* (owned) (nullable) */

  /* Detached: the run's own task has returned at the timeout, the
   * command goes on, and each poll takes the output since the last. */
  guint detached : 1;
  guint interrupt_requested : 1;  /* before the command was written */
  guint escalated : 1;
  GTask *poll_task;             /* (owned) (nullable) */
  GSource *poll_timeout_source; /* (owned) (nullable) */
  GSource *poll_cancel_source;  /* (owned) (nullable) */

  /* An interrupt is in the write queue up to this offset of out (0:
   * none); once written, output from the command means it reacted, and
   * the escalation is called off. */
  gsize interrupt_end;
  guint interrupt_written : 1;
  GSource *escalate_source;     /* (owned) (nullable) */
  gint64 escalate_at;           /* monotonic, of escalate_source */
  GByteArray *early_input;      /* (owned) (nullable) input before the command started */
};

G_DEFINE_FINAL_TYPE (TerretShellSession, terret_shell_session, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CHANNEL,
  PROP_SHELL,
  PROP_ENVIRON,
  PROP_CWD,
  PROP_MAX_OUTPUT,
  PROP_HANDSHAKE_TIMEOUT,
  PROP_INTERRUPT_GRACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void run_start_exchange (Run *run);
static void run_queue_interrupt (Run *run);
static void run_complete_ended (Run *run);

/* --- Helpers ---------------------------------------------------------- */

static guint
seconds_to_msec (double seconds)
{
  double msec = seconds * 1000.0;

  if (msec >= (double)G_MAXUINT)
    return G_MAXUINT;
  if (msec < 1.0)
    return 1;
  return (guint)(msec + 0.5);
}

/* A fresh sentinel per exchange, so one seen in an earlier run's output
 * (a command cannot see one, but a bug might show one) is worthless. */
static void
make_sentinel (char sentinel[SENTINEL_LEN + 1])
{
  static const char hex[] = "0123456789abcdef";
  guint8 bytes[SENTINEL_BYTES];
  gsize got = 0;

  while (got < sizeof bytes)
    {
      gssize n = getrandom (bytes + got, sizeof bytes - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
    }
  /* getrandom() cannot fail on a kernel with it once the pool is ready;
   * this is for the kernel without it. */
  for (; got < sizeof bytes; got++)
    bytes[got] = g_random_int_range (0, 256);

  for (gsize i = 0; i < SENTINEL_BYTES; i++)
    {
      sentinel[2 * i] = hex[bytes[i] >> 4];
      sentinel[2 * i + 1] = hex[bytes[i] & 0xf];
    }
  sentinel[SENTINEL_LEN] = '\0';
}

/* The request line. The command travels inside `$'...'`, where every
 * byte that is not printable ASCII (and `\`, `'`, `!`) is written as
 * `\xHH`:
 *
 * - The whole request is one line that bash reads and parses before it
 *   runs anything, so a command reading stdin (`read x`, `cat`) only ever
 *   sees later input, never the marker's half of the protocol; a
 *   multi-line command, a heredoc or a 100 kB command is still one line
 *   on the wire and runs as written inside eval.
 * - No control byte reaches the terminal's line discipline raw: a 0x03
 *   in a command must not become SIGINT, nor 0x1a a SIGTSTP.
 * - An unclosed quote or any other syntax error is eval's to report, at
 *   once, with status 2, instead of leaving bash waiting for more input.
 *
 * The marker is printed with `builtin printf`, so a `printf` function
 * cannot intercept it; the leading backslashes keep aliases out. The
 * sentinel is passed in two halves, so it never appears whole in the
 * request: a DEBUG trap printing $BASH_COMMAND, or `set -x`, shows two
 * separate words, never the sentinel. The marker begins with a NUL
 * (see MARKER_LEAD_LEN) and printf emits no separator before it, so
 * output that ends without a newline (or with a bare CR) is reported as
 * written. The cwd follows the status and ends in a NUL, which no path
 * can contain, then a newline.
 *
 * With @restore_modes (a channel that cannot set the terminal's modes
 * from the host side, such as a remote one) the line puts them back
 * itself after the command and before the marker, keeping the command's
 * status aside in the positional parameters meanwhile: a command that ran
 * `stty echo` then cannot make every later request echo. The line itself
 * was read before the command ran, so it is never echoed either. */
static GByteArray *
build_request (const char *command,
               const char *sentinel,
               gboolean    on_abandon,
               gboolean    restore_modes)
{
  static const char hex[] = "0123456789abcdef";
  static const char head[] = "\\builtin eval $'";
  g_autofree char *tail = NULL;
  GByteArray *out = g_byte_array_sized_new (strlen (command) + 256);

  /* An interrupt (^C) that reaches the shell itself makes an interactive
   * bash abandon the rest of the line, marker included, and go back to
   * its prompt. PROMPT_COMMAND runs just before that prompt, so it
   * prints the marker instead, with the status the interrupt left (130),
   * and then removes itself; a line that runs to its end removes it
   * after its own marker, so it never fires twice. */
  if (on_abandon)
    {
      g_autofree char *abandon = NULL;

      abandon = g_strdup_printf ("PROMPT_COMMAND='\\builtin set -- \"$?\" \"$@\"; %s"
                                 "\\builtin printf \"\\0%%s%%s%%d;%%s\\0\\n\" %.*s %s "
                                 "\"$1\" \"$PWD\"; \\builtin shift; \\builtin unset PROMPT_COMMAND'; ",
                                 restore_modes ? handshake_stty : "",
                                 SENTINEL_HALF, sentinel, sentinel + SENTINEL_HALF);
      g_byte_array_append (out, (const guint8 *)abandon, strlen (abandon));
    }

  g_byte_array_append (out, (const guint8 *)head, sizeof head - 1);
  for (const guint8 *p = (const guint8 *)command; *p != '\0'; p++)
    {
      if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '\'' && *p != '!')
        g_byte_array_append (out, p, 1);
      else
        {
          guint8 esc[4] = { '\\', 'x', hex[*p >> 4], hex[*p & 0xf] };

          g_byte_array_append (out, esc, sizeof esc);
        }
    }

  if (restore_modes)
    tail = g_strdup_printf ("'; \\builtin set -- \"$?\" \"$@\"; %s"
                            "\\builtin printf '\\0%%s%%s%%d;%%s\\0\\n' %.*s %s \"$1\" \"$PWD\"; "
                            "\\builtin shift%s\n",
                            handshake_stty, SENTINEL_HALF, sentinel, sentinel + SENTINEL_HALF,
                            on_abandon ? "; \\builtin unset PROMPT_COMMAND" : "");
  else
    tail = g_strdup_printf ("'; \\builtin printf '\\0%%s%%s%%d;%%s\\0\\n' %.*s %s \"$?\" \"$PWD\"%s\n",
                            SENTINEL_HALF, sentinel, sentinel + SENTINEL_HALF,
                            on_abandon ? "; \\builtin unset PROMPT_COMMAND" : "");
  g_byte_array_append (out, (const guint8 *)tail, strlen (tail));

  return out;
}

/* @data begins with the marker's lead. A marker is the lead (NUL and the
 * sentinel), 1-3 digits
 * for a status of at most 255, ';', the cwd bytes, NUL, newline; anything
 * else after a sentinel is not a marker. */
static MarkerParse
parse_marker (const guint8  *data,
              gsize          len,
              gsize         *marker_len,
              int           *status,
              char         **cwd)
{
  gsize i = MARKER_LEAD_LEN;
  gsize digits = 0;
  int value = 0;
  const guint8 *nul;

  while (i < len && g_ascii_isdigit (data[i]))
    {
      if (++digits > STATUS_MAX_DIGITS)
        return MARKER_INVALID;
      value = value * 10 + (data[i] - '0');
      i++;
    }
  if (i == len)
    return MARKER_INCOMPLETE;
  if (digits == 0 || data[i] != ';' || value > 255)
    return MARKER_INVALID;
  i++;

  nul = memchr (data + i, '\0', len - i);
  if (nul == NULL)
    return len - i > CWD_MAX ? MARKER_INVALID : MARKER_INCOMPLETE;
  if ((gsize)(nul - data) + 1 == len)
    return MARKER_INCOMPLETE;
  if (nul[1] != '\n')
    return MARKER_INVALID;

  *marker_len = (nul - data) + 2;
  *status = value;
  *cwd = g_strndup ((const char *)data + i, nul - (data + i));
  return MARKER_FOUND;
}

/**
 * terret_shell_session_build_environ:
 * @base: (array zero-terminated=1) (nullable): the environment to start
 *   from, or %NULL for the host process's
 * @overlay: (array zero-terminated=1) (nullable): `VARIABLE=value`
 *   entries that go on top
 * @error: return location for a #GError
 *
 * Builds the environment a session's shell starts with: @base, then the
 * defaults for a host with nobody at the terminal (`TERM=dumb`,
 * `PAGER=cat`, `GIT_PAGER=cat`, `MANPAGER=cat`, `SYSTEMD_PAGER=cat`,
 * `GH_PAGER=cat`, `NO_COLOR=1`), then @overlay, which can change any of
 * them. `HISTFILE` is always set empty, so the shell never reads or
 * writes the user's history file.
 *
 * Returns: (transfer full) (array zero-terminated=1): the environment, or
 *   %NULL with %TERRET_EXEC_ERROR_INVALID_CONFIG when an @overlay entry is
 *   not `VARIABLE=value`
 *
 * Since: 0.1
 */
char **
terret_shell_session_build_environ (const char * const  *base,
                                    const char * const  *overlay,
                                    GError             **error)
{
  g_auto(GStrv) envp = NULL;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  envp = base != NULL ? g_strdupv ((char **)base) : g_get_environ ();

  for (guint i = 0; default_environ[i] != NULL; i++)
    {
      const char *eq = strchr (default_environ[i], '=');
      g_autofree char *key = g_strndup (default_environ[i], eq - default_environ[i]);

      envp = g_environ_setenv (envp, key, eq + 1, TRUE);
    }

  for (guint i = 0; overlay != NULL && overlay[i] != NULL; i++)
    {
      const char *eq = strchr (overlay[i], '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == overlay[i])
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "The environment entry “%s” is not of the form VARIABLE=value",
                       overlay[i]);
          return NULL;
        }
      key = g_strndup (overlay[i], eq - overlay[i]);
      envp = g_environ_setenv (envp, key, eq + 1, TRUE);
    }

  envp = g_environ_setenv (envp, "HISTFILE", "", TRUE);

  return g_steal_pointer (&envp);
}

/* --- Runs ------------------------------------------------------------- */

static void
run_free (Run *run)
{
  _terret_clear_source (&run->read_source);
  _terret_clear_source (&run->write_source);
  _terret_clear_source (&run->exit_source);
  _terret_clear_source (&run->grace_source);
  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  _terret_clear_source (&run->escalate_source);

  g_clear_object (&run->session);
  g_clear_object (&run->task);
  g_clear_object (&run->poll_task);
  g_clear_pointer (&run->early_input, g_byte_array_unref);
  g_clear_object (&run->request);
  g_clear_pointer (&run->context, g_main_context_unref);
  g_clear_object (&run->cancellable);
  if (run->notices != NULL)
    g_string_free (run->notices, TRUE);
  g_clear_pointer (&run->out, g_byte_array_unref);
  g_clear_pointer (&run->hold, g_byte_array_unref);
  g_clear_pointer (&run->capture, terret_head_capture_free);
  g_clear_pointer (&run->cwd, g_free);
  g_free (run);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Run, run_free)

static void
run_add_notice (Run        *run,
                const char *notice)
{
  if (run->notices->len > 0)
    g_string_append_c (run->notices, ' ');
  g_string_append (run->notices, notice);
}

static void
run_detach_sources (Run *run)
{
  _terret_clear_source (&run->read_source);
  _terret_clear_source (&run->write_source);
  _terret_clear_source (&run->exit_source);
  _terret_clear_source (&run->grace_source);
  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  _terret_clear_source (&run->escalate_source);
}

/* Ends the run: the session is free again before the task returns,
 * because the caller's callback may start the next run on it at once.
 *
 * The outcome goes to whoever waits for it: the run's own task, or once
 * the run detached, the poll in flight; with neither, the end of a
 * detached command is parked for the next poll. */
static void
run_return (Run          *run,
            TerretResult *result,
            GError       *error)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);
  g_autoptr(GTask) poll_task = g_steal_pointer (&run->poll_task);
  TerretShellSession *session = run->session;

  run_detach_sources (run);

  if (task == NULL)
    task = g_steal_pointer (&poll_task);

  g_mutex_lock (&session->mutex);
  session->busy = FALSE;
  session->close_requested = FALSE;
  if (session->run == run)
    session->run = NULL;
  if (task == NULL && result != NULL)
    g_set_object (&session->parked, result);
  g_mutex_unlock (&session->mutex);

  run_free (run);

  if (task == NULL)
    {
      g_clear_object (&result);
      g_clear_error (&error);
    }
  else if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, g_object_unref);
}

/* Kills the shell and everything it started, and reaps it. */
static void
run_kill_shell (Run *run)
{
  run_detach_sources (run);
  terret_shell_channel_terminate (run->session->channel);
}

/* Output that is certainly the command's: kept under the cap and shown
 * to the progress callback. */
static void
run_confirm (Run  *run,
             gsize n)
{
  if (n == 0)
    return;

  terret_head_capture_append (run->capture, run->hold->data, n);
  /* Once detached, the run's caller has its result and nobody asked to
   * hear more through the request: polls carry the rest. */
  if (run->phase == PHASE_COMMAND && !run->detached)
    terret_request_report_progress (run->request, TERRET_STREAM_STDOUT, run->hold->data, n);
  g_byte_array_remove_range (run->hold, 0, n);

  /* A command that writes anything after the interrupt reached it has
   * reacted to it (a REPL back at its prompt, a trap that printed): it is
   * handled, not ignored, and is not killed for it. */
  if (run->interrupt_written && run->phase == PHASE_COMMAND)
    _terret_clear_source (&run->escalate_source);
}

/* Feeds terminal bytes through the marker scanner. Returns TRUE when the
 * marker was found (run->status and run->cwd are then set); bytes after
 * it are not this run's and are dropped. */
static gboolean
run_feed (Run          *run,
          const guint8 *data,
          gsize         len)
{
  g_byte_array_append (run->hold, data, len);

  for (;;)
    {
      const guint8 *found = memmem (run->hold->data, run->hold->len,
                                    run->lead, MARKER_LEAD_LEN);
      gsize marker_len = 0;
      gsize keep;

      if (found == NULL)
        {
          /* Hold back the longest tail that could begin a sentinel, so
           * that no part of one is ever reported or kept. */
          gsize n;

          keep = MIN (run->hold->len, MARKER_LEAD_LEN - 1);
          while (keep > 0 &&
                 memcmp (run->hold->data + run->hold->len - keep, run->lead, keep) != 0)
            keep--;
          n = run->hold->len - keep;
          /* A run that may hand its output over in pieces (a detaching
           * timeout, then polls) must not cut a character between two of
           * them: the start of one still arriving waits here for its
           * end. Bytes that are never completed are released at the
           * marker, or when the run ends, as they were written. */
          if (keep == 0 && run->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
            n = terret_utf8_whole_prefix (run->hold->data, n);
          run_confirm (run, n);
          return FALSE;
        }

      run_confirm (run, found - run->hold->data);

      switch (parse_marker (run->hold->data, run->hold->len, &marker_len,
                            &run->status, &run->cwd))
        {
        case MARKER_INCOMPLETE:
          return FALSE;

        case MARKER_INVALID:
          run_confirm (run, 1);
          break;

        case MARKER_FOUND:
        default:
          g_byte_array_set_size (run->hold, 0);
          return TRUE;
        }
    }
}

/* What a run that ended without its marker read: everything, including a
 * tail held back in case it was a marker's beginning (it was not: this
 * exchange is over, and its sentinel is never used again). */
static GBytes *
run_take_partial (Run     *run,
                  guint64 *dropped)
{
  run_confirm (run, run->hold->len);
  return terret_head_capture_finish_partial (run->capture, dropped);
}

static void
run_add_capture_notice (Run     *run,
                        gsize    kept,
                        guint64  dropped,
                        guint64  seen)
{
  g_autofree char *notice = NULL;

  if (dropped == 0)
    return;

  if (seen > run->max_output)
    notice = g_strdup_printf ("output truncated at max-output: kept the first %" G_GSIZE_FORMAT
                              " bytes and dropped %" G_GUINT64_FORMAT " more.",
                              kept, dropped);
  else
    notice = g_strdup_printf ("the output was cut off inside a UTF-8 character; its first "
                              "%" G_GUINT64_FORMAT " bytes were dropped.", dropped);
  run_add_notice (run, notice);
}

static TerretResult *run_build_result (Run    *run,
                                       GBytes *output,
                                       guint64 dropped);

/* The stretch of output since the detaching run or the last poll
 * returned, as a result of a command that goes on; the next stretch
 * starts empty, under the same cap. Every byte in the capture is whole
 * characters (see run_feed), so the stretch ends where the output does. */
static TerretResult *
run_take_stretch (Run *run)
{
  g_autoptr(GBytes) output = NULL;
  TerretResult *result;
  guint64 seen = terret_head_capture_get_seen (run->capture);
  guint64 dropped = 0;

  output = terret_head_capture_finish (run->capture, seen, &dropped);
  run_add_capture_notice (run, g_bytes_get_size (output), dropped, seen);
  result = run_build_result (run, output, dropped);
  terret_result_set_running (result, TRUE);

  g_string_truncate (run->notices, 0);
  terret_head_capture_free (run->capture);
  run->capture = terret_head_capture_new (MIN (run->max_output, (guint64)G_MAXSIZE / 4), 1);

  return result;
}

static gboolean
run_has_news (Run *run)
{
  return terret_head_capture_get_seen (run->capture) > 0 || run->notices->len > 0;
}

/* Answers the poll in flight with the stretch so far. */
static void
run_poll_return (Run *run)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->poll_task);

  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  if (task != NULL)
    g_task_return_pointer (task, run_take_stretch (run), g_object_unref);
}

static TerretResult *
run_build_result (Run    *run,
                  GBytes *output,
                  guint64 dropped)
{
  TerretResult *result = terret_result_new ();

  terret_result_set_stdout (result, output);
  if (dropped > 0)
    terret_result_set_dropped (result, TERRET_STREAM_STDOUT, dropped, g_bytes_get_size (output));
  if (run->notices->len > 0)
    terret_result_add_notice (result, run->notices->str);

  return result;
}

/* The handshake failed: the half-started shell is reaped here, since
 * nothing else holds it yet. */
static void
run_fail_handshake (Run        *run,
                    const char *why)
{
  g_autoptr(GBytes) said = NULL;
  g_autoptr(GString) message = g_string_new (NULL);
  gsize len = 0;
  const char *data;

  run_kill_shell (run);
  said = run_take_partial (run, NULL);
  data = g_bytes_get_data (said, &len);

  g_string_append_printf (message, "The shell did not answer its start-up handshake: %s", why);
  if (len > 0)
    {
      g_autofree char *text = g_utf8_make_valid (data, len);

      g_strstrip (text);
      if (*text != '\0')
        g_string_append_printf (message, "; it said: %s", text);
    }

  run_return (run, NULL, g_error_new_literal (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                                              message->str));
}

static void
run_complete_marker (Run *run)
{
  g_autoptr(GBytes) output = NULL;
  TerretResult *result;
  guint64 seen = terret_head_capture_get_seen (run->capture);
  guint64 dropped = 0;

  if (run->phase == PHASE_HANDSHAKE)
    {
      run->phase = PHASE_COMMAND;
      run_start_exchange (run);
      return;
    }

  /* Nothing of the marker ever entered the capture, so the output ends
   * at everything it has seen. */
  output = terret_head_capture_finish (run->capture, seen, &dropped);
  run_add_capture_notice (run, g_bytes_get_size (output), dropped, seen);

  result = run_build_result (run, output, dropped);
  terret_result_set_exit_status (result, run->status);
  terret_result_set_cwd (result, run->cwd);

  run_return (run, result, NULL);
}

/* The shell ended (or the terminal closed) under the command. */
static void
run_complete_ended (Run *run)
{
  g_autoptr(GBytes) output = NULL;
  TerretShellSession *session = run->session;
  guint64 seen, dropped = 0;
  gboolean closed;

  if (run->phase == PHASE_HANDSHAKE)
    {
      int wait_status = 0;
      g_autofree char *why = NULL;

      if (terret_shell_channel_get_exited (session->channel, &wait_status))
        why = g_strdup_printf ("it exited (wait status %d)", wait_status);
      else
        why = g_strdup ("its terminal closed");
      run_fail_handshake (run, why);
      return;
    }

  run_kill_shell (run);

  g_mutex_lock (&session->mutex);
  closed = session->close_requested;
  g_mutex_unlock (&session->mutex);

  seen = terret_head_capture_get_seen (run->capture) + run->hold->len;
  output = run_take_partial (run, &dropped);
  run_add_capture_notice (run, g_bytes_get_size (output), dropped, seen);
  if (closed)
    run_add_notice (run, "The shell session was closed while this command ran; the next run "
                         "starts a fresh session, so the cwd and variables from earlier runs "
                         "are gone.");
  else if (run->escalated)
    {
      g_autofree char *notice = NULL;

      notice = g_strdup_printf ("The command was still running %g s after it was interrupted, "
                                "so it was killed with its shell session; the next run starts a "
                                "fresh session, so the cwd and variables from earlier runs are "
                                "gone.", run->interrupt_grace);
      run_add_notice (run, notice);
    }
  else
    run_add_notice (run, "The shell session ended while this command ran; the next run starts "
                         "a fresh session, so the cwd and variables from earlier runs are gone.");

  run_return (run, run_build_result (run, output, dropped), NULL);
}

/* Reads one chunk. Returns FALSE when the run has been completed. */
static gboolean
run_read_once (Run      *run,
               gboolean *would_block)
{
  g_autoptr(GError) error = NULL;
  gssize n;

  *would_block = FALSE;
  n = terret_shell_channel_read (run->session->channel, run->session->read_buffer, READ_CHUNK, &error);

  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      *would_block = TRUE;
      return TRUE;
    }

  if (n <= 0)
    {
      run_complete_ended (run);
      return FALSE;
    }

  if (run_feed (run, run->session->read_buffer, n))
    {
      run_complete_marker (run);
      return FALSE;
    }

  if (run->poll_task != NULL && run_has_news (run))
    run_poll_return (run);

  return TRUE;
}

static gboolean
run_on_readable (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  Run *run = user_data;
  gboolean would_block;

  run_read_once (run, &would_block);
  /* Level-triggered: if more is there, the next iteration comes back. A
   * completed run has destroyed this source already. */
  return G_SOURCE_CONTINUE;
}

/* Writes what it can of the request. Returns FALSE when the run has been
 * completed (the terminal is gone). */
static gboolean run_flush (Run *run);

static gboolean
run_on_writable (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  Run *run = user_data;

  run_flush (run);
  return G_SOURCE_CONTINUE;
}

static gboolean
run_flush (Run *run)
{
  TerretShellChannel *channel = run->session->channel;

  while (run->out_pos < run->out->len)
    {
      g_autoptr(GError) error = NULL;
      gssize n = terret_shell_channel_write (channel, run->out->data + run->out_pos,
                                             run->out->len - run->out_pos, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          if (run->write_source == NULL)
            {
              run->write_source = g_unix_fd_source_new (terret_shell_channel_get_write_fd (channel),
                                                        G_IO_OUT);
              g_source_set_static_name (run->write_source, "[terret] shell request");
              g_source_set_callback (run->write_source, G_SOURCE_FUNC (run_on_writable),
                                     run, NULL);
              g_source_attach (run->write_source, run->context);
            }
          return TRUE;
        }

      if (n < 0)
        {
          /* EIO or EPIPE: the shell is gone. That is how it is learned,
           * not a failure of ours. */
          run_complete_ended (run);
          return FALSE;
        }

      run->out_pos += n;
      if (run->interrupt_end > 0 && run->out_pos >= run->interrupt_end)
        {
          run->interrupt_end = 0;
          run->interrupt_written = TRUE;
        }
    }

  /* Input keeps arriving for a long-running command: what was written
   * is not kept. */
  g_byte_array_set_size (run->out, 0);
  run->out_pos = 0;
  _terret_clear_source (&run->write_source);
  return TRUE;
}

static gboolean
run_on_grace_over (gpointer user_data)
{
  run_complete_ended (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
run_on_exited (gpointer user_data)
{
  Run *run = user_data;

  /* Read what the shell wrote before it went, until the terminal reports
   * its end; a background job may hold it open, hence the grace. */
  _terret_clear_source (&run->exit_source);
  if (run->grace_source == NULL)
    {
      run->grace_source = g_timeout_source_new (EXIT_GRACE_MSEC);
      g_source_set_static_name (run->grace_source, "[terret] shell exit grace");
      g_source_set_callback (run->grace_source, run_on_grace_over, run, NULL);
      g_source_attach (run->grace_source, run->context);
    }

  return G_SOURCE_REMOVE;
}

static void
run_interrupt (Run *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  /* The gentler half of ending a run; the kill that follows guarantees
   * the rest. A failure means the terminal is already gone. */
  terret_shell_channel_write (run->session->channel, &interrupt, 1, NULL);
}

/* The timeout detaches: the caller gets the output so far, and the
 * command goes on with the fd sources where they are, so its end is seen
 * and its output kept (under the cap) for the next poll. The session stays
 * busy meanwhile. The run's cancellable was for the run call, which is
 * over. */
static void
run_detach (Run *run)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);
  g_autofree char *notice = NULL;
  TerretResult *result;

  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->cancel_source);
  run->detached = TRUE;

  notice = g_strdup_printf ("Still running after %g s; the command goes on in its session. "
                            "Poll the session for its further output and final status, send "
                            "it input, or interrupt it; new runs in the session are refused "
                            "until it ends.", run->timeout);
  run_add_notice (run, notice);

  result = run_take_stretch (run);
  terret_result_set_timed_out (result, TRUE);
  g_task_return_pointer (task, result, g_object_unref);
}

static gboolean
run_on_timeout (gpointer user_data)
{
  Run *run = user_data;
  g_autoptr(GBytes) output = NULL;
  g_autofree char *notice = NULL;
  TerretResult *result;
  guint64 seen, dropped = 0;

  if (run->phase == PHASE_HANDSHAKE)
    {
      g_autofree char *why = g_strdup_printf ("no answer within %g s", run->exchange_timeout);

      run_fail_handshake (run, why);
      return G_SOURCE_REMOVE;
    }

  if (run->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
    {
      run_detach (run);
      return G_SOURCE_REMOVE;
    }

  /* Kill and respawn rather than try to recover: after an interrupt the
   * shell's input and the output still in flight are in a state nothing
   * can account for. The next run gets a shell that is known, and the
   * caller is told so rather than left to discover a lost `cd`. */
  run_interrupt (run);
  run_kill_shell (run);

  seen = terret_head_capture_get_seen (run->capture) + run->hold->len;
  output = run_take_partial (run, &dropped);
  run_add_capture_notice (run, g_bytes_get_size (output), dropped, seen);
  notice = g_strdup_printf ("Timed out after %g s; the command was interrupted and the shell "
                            "session killed, so the next run starts a fresh session.",
                            run->timeout);
  run_add_notice (run, notice);

  result = run_build_result (run, output, dropped);
  terret_result_set_timed_out (result, TRUE);
  run_return (run, result, NULL);

  return G_SOURCE_REMOVE;
}

static gboolean
run_on_cancelled (GCancellable *cancellable,
                  gpointer      user_data)
{
  Run *run = user_data;
  TerretShellSession *session = run->session;
  GError *error = NULL;

  if (run->phase == PHASE_COMMAND)
    run_interrupt (run);
  run_kill_shell (run);

  g_mutex_lock (&session->mutex);
  g_free (session->pending_notice);
  session->pending_notice =
    g_strdup ("The previous command was cancelled and its shell session killed; a fresh one "
              "was started, so the cwd and variables from earlier runs are gone.");
  g_mutex_unlock (&session->mutex);

  g_cancellable_set_error_if_cancelled (cancellable, &error);
  run_return (run, NULL, error);

  return G_SOURCE_REMOVE;
}

static gboolean
run_on_escalate (gpointer user_data)
{
  Run *run = user_data;

  /* With job control off the command shares bash's process group, so
   * killing what ignored the interrupt ends the shell too: the run ends
   * as one whose shell ended, and says why. */
  _terret_clear_source (&run->escalate_source);
  run->escalated = TRUE;
  run_complete_ended (run);
  return G_SOURCE_REMOVE;
}

static void
run_attach_escalation (Run  *run,
                       gint64 now)
{
  gint64 left = MAX (run->escalate_at - now, 0);

  _terret_clear_source (&run->escalate_source);
  run->escalate_source = g_timeout_source_new ((guint)MIN (left / 1000 + 1, (gint64)G_MAXUINT));
  g_source_set_static_name (run->escalate_source, "[terret] interrupt grace");
  g_source_set_callback (run->escalate_source, run_on_escalate, run, NULL);
  g_source_attach (run->escalate_source, run->context);
}

/* Queues ^C behind any input already queued (the terminal sees them in
 * the order the caller sent them) and starts the grace after which a
 * command that did not react is killed. A later interrupt keeps the
 * grace that runs. */
static void
run_queue_interrupt (Run *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  g_byte_array_append (run->out, &interrupt, 1);
  run->interrupt_end = run->out->len;
  run->interrupt_written = FALSE;

  if (run->escalate_source == NULL)
    {
      gint64 now = g_get_monotonic_time ();

      run->escalate_at = now + (gint64)(run->interrupt_grace * G_USEC_PER_SEC);
      run_attach_escalation (run, now);
    }
}

static void
attach_read_source (Run *run)
{
  TerretShellChannel *channel = run->session->channel;

  run->read_source = g_unix_fd_source_new (terret_shell_channel_get_read_fd (channel),
                                           G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (run->read_source, "[terret] shell output");
  g_source_set_callback (run->read_source, G_SOURCE_FUNC (run_on_readable), run, NULL);
  g_source_attach (run->read_source, run->context);
}

/* A detached command is read on the main context of whoever last asked
 * for it (the run, then each poll): the one its caller iterates. */
static void
run_adopt_context (Run *run)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();

  if (context == run->context)
    return;

  g_main_context_unref (run->context);
  run->context = g_steal_pointer (&context);

  if (run->read_source != NULL)
    {
      _terret_clear_source (&run->read_source);
      attach_read_source (run);
    }
  if (run->write_source != NULL)
    {
      _terret_clear_source (&run->write_source);
      run->write_source = g_unix_fd_source_new (terret_shell_channel_get_write_fd (run->session->channel),
                                                G_IO_OUT);
      g_source_set_static_name (run->write_source, "[terret] shell request");
      g_source_set_callback (run->write_source, G_SOURCE_FUNC (run_on_writable), run, NULL);
      g_source_attach (run->write_source, run->context);
    }
  if (run->exit_source != NULL)
    {
      _terret_clear_source (&run->exit_source);
      run->exit_source = terret_shell_channel_create_exit_source (run->session->channel);
      g_source_set_callback (run->exit_source, run_on_exited, run, NULL);
      g_source_attach (run->exit_source, run->context);
    }
  if (run->grace_source != NULL)
    {
      _terret_clear_source (&run->grace_source);
      run->grace_source = g_timeout_source_new (EXIT_GRACE_MSEC);
      g_source_set_static_name (run->grace_source, "[terret] shell exit grace");
      g_source_set_callback (run->grace_source, run_on_grace_over, run, NULL);
      g_source_attach (run->grace_source, run->context);
    }
  if (run->escalate_source != NULL)
    run_attach_escalation (run, g_get_monotonic_time ());
}

/* Starts one exchange (the handshake, or the command): a fresh sentinel,
 * the terminal re-asserted, the request written, and the sources that
 * end it attached. */
static void
run_start_exchange (Run *run)
{
  TerretShellChannel *channel = run->session->channel;
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;
  const char *command;
  double timeout;

  make_sentinel (run->sentinel);
  run->lead[0] = '\0';
  memcpy (run->lead + 1, run->sentinel, SENTINEL_LEN);
  g_byte_array_set_size (run->hold, 0);
  g_clear_pointer (&run->capture, terret_head_capture_free);
  g_clear_pointer (&run->cwd, g_free);

  if (run->phase == PHASE_HANDSHAKE)
    {
      script = g_strconcat (terret_shell_channel_can_prepare_run (channel) ? "" : handshake_stty,
                            handshake_script, NULL);
      command = script;
      g_mutex_lock (&run->session->mutex);
      timeout = run->session->handshake_timeout;
      g_mutex_unlock (&run->session->mutex);
      run->capture = terret_head_capture_new (HANDSHAKE_OUTPUT_LIMIT, 1);
    }
  else
    {
      command = terret_request_get_command (run->request);
      timeout = run->timeout;
      /* The capture's window is what it keeps past the cap for a marker
       * scanner; the scanner here works ahead of the capture and never
       * lets a marker byte into it, so one byte is enough. */
      run->capture = terret_head_capture_new (MIN (run->max_output, (guint64)G_MAXSIZE / 4), 1);
      _terret_clear_source (&run->timeout_source);
    }

  /* Whatever the previous command did to the terminal (`stty echo`,
   * `stty icanon`) is undone here, from the host side, so it cannot
   * corrupt this exchange. */
  if (!terret_shell_channel_prepare_run (channel, &error))
    g_debug ("Could not set the shell's terminal modes: %s", error->message);

  g_clear_pointer (&run->out, g_byte_array_unref);
  run->out = build_request (command, run->sentinel, run->phase == PHASE_COMMAND,
                            run->phase == PHASE_COMMAND &&
                            !terret_shell_channel_can_prepare_run (channel));
  run->out_pos = 0;

  /* Input and an interrupt that came while the shell was starting follow
   * the command, in the order they came. */
  if (run->phase == PHASE_COMMAND && run->early_input != NULL)
    {
      g_byte_array_append (run->out, run->early_input->data, run->early_input->len);
      g_clear_pointer (&run->early_input, g_byte_array_unref);
    }

  if (run->read_source == NULL)
    attach_read_source (run);

  if (run->exit_source == NULL && run->grace_source == NULL)
    {
      run->exit_source = terret_shell_channel_create_exit_source (channel);
      g_source_set_callback (run->exit_source, run_on_exited, run, NULL);
      g_source_attach (run->exit_source, run->context);
    }

  if (run->cancel_source == NULL && run->cancellable != NULL)
    {
      run->cancel_source = g_cancellable_source_new (run->cancellable);
      g_source_set_static_name (run->cancel_source, "[terret] shell cancel");
      g_source_set_callback (run->cancel_source, G_SOURCE_FUNC (run_on_cancelled), run, NULL);
      g_source_attach (run->cancel_source, run->context);
    }

  if (timeout > 0)
    {
      run->timeout_source = g_timeout_source_new (seconds_to_msec (timeout));
      g_source_set_static_name (run->timeout_source, "[terret] shell deadline");
      g_source_set_callback (run->timeout_source, run_on_timeout, run, NULL);
      g_source_attach (run->timeout_source, run->context);
    }
  run->exchange_timeout = timeout;

  if (run->phase == PHASE_COMMAND && run->interrupt_requested)
    {
      run->interrupt_requested = FALSE;
      run_queue_interrupt (run);
    }

  run_flush (run);
}

/* Between runs: drains what background jobs printed, and finds out
 * whether the shell is still there. Returns FALSE when it is gone. */
static gboolean
session_drain_idle (TerretShellSession *self)
{
  gint64 deadline = g_get_monotonic_time () + DRAIN_BUDGET_USEC;
  /* On the stack: between runs there is usually nothing to read, and a
   * heap chunk per run made glibc trim and fault the pages in again on
   * every run. */
  guint8 buffer[4096];

  if (terret_shell_channel_check_exited (self->channel))
    return FALSE;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gssize n = terret_shell_channel_read (self->channel, buffer, sizeof buffer, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return TRUE;
      if (n <= 0)
        return FALSE;
      if (g_get_monotonic_time () >= deadline)
        return TRUE;
    }
}

/* --- Closing ---------------------------------------------------------- */

typedef struct
{
  TerretShellChannel *channel;
  gboolean done;
} Farewell;

static gboolean
farewell_on_readable (int          fd,
                      GIOCondition condition,
                      gpointer     user_data)
{
  Farewell *farewell = user_data;
  guint8 buffer[4096];
  gssize n;

  /* Read to the end: a shell whose terminal still holds unread bytes may
   * not finish exiting. At the end, stop watching the descriptor (it
   * would stay readable) and wait for the exit itself. */
  n = terret_shell_channel_read (farewell->channel, buffer, sizeof buffer, NULL);
  return n == 0 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static gboolean
farewell_done (gpointer user_data)
{
  Farewell *farewell = user_data;

  farewell->done = TRUE;
  return G_SOURCE_REMOVE;
}

/* Asks the shell to leave, within a budget, on a private context (so it
 * works from any thread and wherever the caller's loop is), then ends
 * the whole process group and reaps the shell. */
static void
session_shut_down (TerretShellSession *self)
{
  static const char bye[] = "\\builtin exit\n";
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GSource) exit_source = NULL;
  g_autoptr(GSource) timeout_source = NULL;
  g_autoptr(GSource) read_source = NULL;
  Farewell farewell = { self->channel, FALSE };

  if (!terret_shell_channel_is_open (self->channel))
    return;

  if (!terret_shell_channel_check_exited (self->channel) &&
      terret_shell_channel_prepare_run (self->channel, NULL) &&
      terret_shell_channel_write (self->channel, (const guint8 *)bye, sizeof bye - 1, NULL) ==
        (gssize)(sizeof bye - 1))
    {
      context = g_main_context_new ();

      exit_source = terret_shell_channel_create_exit_source (self->channel);
      g_source_set_callback (exit_source, farewell_done, &farewell, NULL);
      g_source_attach (exit_source, context);

      timeout_source = g_timeout_source_new (FAREWELL_MSEC);
      g_source_set_callback (timeout_source, farewell_done, &farewell, NULL);
      g_source_attach (timeout_source, context);

      read_source = g_unix_fd_source_new (terret_shell_channel_get_read_fd (self->channel),
                                          G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_callback (read_source, G_SOURCE_FUNC (farewell_on_readable), &farewell, NULL);
      g_source_attach (read_source, context);

      while (!farewell.done)
        g_main_context_iteration (context, TRUE);

      g_source_destroy (exit_source);
      g_source_destroy (timeout_source);
      g_source_destroy (read_source);
    }

  /* Whether bash left or not: its background jobs did not. */
  terret_shell_channel_terminate (self->channel);
}

/**
 * terret_shell_session_close:
 * @self: a session
 *
 * Ends the session's shell and everything it started: bash is asked to
 * exit and given about a second, then its whole process group is
 * SIGKILLed and the shell reaped, so no background job survives. Safe to
 * call from any thread and on a session with no shell.
 *
 * If a run is in flight, the shell is killed at once instead; that run
 * completes with no status and a notice saying the session was closed.
 *
 * The session can run commands again afterwards, in a fresh shell.
 *
 * Since: 0.1
 */
void
terret_shell_session_close (TerretShellSession *self)
{
  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));

  g_mutex_lock (&self->mutex);
  if (self->busy && self->run != NULL && self->run->task == NULL)
    {
      Run *run = self->run;

      /* A detached command: no run call waits on its context, which
       * may never be iterated again (a sync run's), so it ends here. */
      self->close_requested = TRUE;
      g_mutex_unlock (&self->mutex);
      g_object_ref (self);
      run_complete_ended (run);
      g_mutex_lock (&self->mutex);
      g_clear_object (&self->parked);
      g_mutex_unlock (&self->mutex);
      g_object_unref (self);
      return;
    }
  if (self->busy)
    {
      self->close_requested = TRUE;
      g_mutex_unlock (&self->mutex);
      terret_shell_channel_kill (self->channel);
      return;
    }
  /* Claimed for the farewell, so that a run arriving meanwhile is refused
   * rather than interleaved with it. */
  self->busy = TRUE;
  g_clear_pointer (&self->pending_notice, g_free);
  g_clear_object (&self->parked);
  g_mutex_unlock (&self->mutex);

  session_shut_down (self);

  g_mutex_lock (&self->mutex);
  self->busy = FALSE;
  g_mutex_unlock (&self->mutex);
}

/* --- Running ---------------------------------------------------------- */

/**
 * terret_shell_session_run_async:
 * @self: a session
 * @request: the command, and the progress callback its output goes to
 * @timeout: seconds the command may run, or 0 for no limit
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async) (closure user_data): called when the run is over
 * @user_data: data for @callback
 *
 * Runs @request's command in the session's shell, starting the shell
 * first if there is none (or the previous one ended). Only the request's
 * command and progress callback are used: its session key, timeout, cwd
 * and environment are the caller's to resolve.
 *
 * The run happens on the thread-default main context of the caller,
 * where @callback is invoked.
 *
 * Since: 0.1
 */
void
terret_shell_session_run_async (TerretShellSession  *self,
                                TerretRequest       *request,
                                double               timeout,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(Run) run = NULL;
  g_auto(GStrv) envp = NULL;
  g_autofree char *shell = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *pending_notice = NULL;
  g_autoptr(TerretResult) parked = NULL;
  const char *argv[G_N_ELEMENTS (shell_flags) + 1];

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));
  g_return_if_fail (TERRET_IS_REQUEST (request));
  g_return_if_fail (timeout >= 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, terret_shell_session_run_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  g_mutex_lock (&self->mutex);
  if (self->busy)
    {
      gboolean detached = self->run != NULL && self->run->task == NULL;

      g_mutex_unlock (&self->mutex);
      if (detached)
        g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                                 "The shell session is running a command a timeout detached "
                                 "from; poll it, send it input or interrupt it, and run again "
                                 "once it ended");
      else
        g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                                 "The shell session is already running a command");
      return;
    }
  self->busy = TRUE;
  self->close_requested = FALSE;
  pending_notice = g_steal_pointer (&self->pending_notice);
  parked = g_steal_pointer (&self->parked);
  shell = g_strdup (self->shell);
  cwd = g_strdup (self->cwd);
  envp = g_strdupv (self->environ);
  g_mutex_unlock (&self->mutex);

  run = g_new0 (Run, 1);
  run->session = g_object_ref (self);
  run->task = g_steal_pointer (&task);
  run->request = g_object_ref (request);
  run->context = g_main_context_ref_thread_default ();
  run->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  run->timeout = timeout;
  run->max_output = terret_shell_session_get_max_output (self);
  run->notices = g_string_new (NULL);
  run->hold = g_byte_array_new ();
  if (self->read_buffer == NULL)
    self->read_buffer = g_malloc (READ_CHUNK);
  run->status = -1;
  run->timeout_action = terret_request_get_timeout_action (request);
  g_mutex_lock (&self->mutex);
  run->interrupt_grace = self->interrupt_grace;
  self->run = run;
  g_mutex_unlock (&self->mutex);

  if (pending_notice != NULL)
    run_add_notice (run, pending_notice);

  /* Its caller chose to run something else instead of collecting it. */
  if (parked != NULL)
    {
      g_autofree char *status = terret_result_get_exited (parked)
        ? g_strdup_printf ("with status %d", terret_result_get_exit_status (parked))
        : g_strdup ("without a status");
      g_autofree char *notice = NULL;

      notice = g_strdup_printf ("The command left running earlier in this session ended %s "
                                "before its last output was polled; that output was "
                                "discarded.%s%s", status,
                                terret_result_get_notice (parked) != NULL ? " It said: " : "",
                                terret_result_get_notice (parked) != NULL
                                  ? terret_result_get_notice (parked) : "");
      run_add_notice (run, notice);
    }

  if (terret_shell_channel_is_open (self->channel) && !session_drain_idle (self))
    {
      terret_shell_channel_terminate (self->channel);
      run_add_notice (run, "The shell session had exited; a fresh one was started, so the cwd "
                           "and variables from earlier runs are gone.");
    }

  if (terret_shell_channel_is_open (self->channel))
    {
      run->phase = PHASE_COMMAND;
      run_start_exchange (g_steal_pointer (&run));
      return;
    }

  if (envp == NULL)
    envp = terret_shell_session_build_environ (NULL, NULL, NULL);

  argv[0] = shell;
  for (guint i = 0; shell_flags[i] != NULL; i++)
    argv[i + 1] = shell_flags[i];
  argv[G_N_ELEMENTS (argv) - 1] = NULL;

  if (!terret_shell_channel_spawn (self->channel, argv, (const char * const *)envp, cwd, &error))
    {
      Run *failed = g_steal_pointer (&run);

      run_return (failed, NULL,
                  g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                               "Could not start the shell: %s", error->message));
      return;
    }

  run->phase = PHASE_HANDSHAKE;
  run_start_exchange (g_steal_pointer (&run));
}

/**
 * terret_shell_session_run_finish:
 * @self: a session
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes [method@Terret.ShellSession.run_async].
 *
 * Returns: (transfer full): the result of a command that ran: its status
 *   (none when it timed out or its shell ended under it), the terminal's
 *   bytes as stdout (stderr is %NULL: a terminal has one stream), the
 *   cwd after the run and a notice for anything the caller did not ask
 *   for. %NULL with %TERRET_EXEC_ERROR_BUSY, %TERRET_EXEC_ERROR_UNAVAILABLE
 *   or %G_IO_ERROR_CANCELLED when nothing ran to completion.
 *
 * Since: 0.1
 */
TerretResult *
terret_shell_session_run_finish (TerretShellSession  *self,
                                 GAsyncResult        *result,
                                 GError             **error)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --- Interacting ------------------------------------------------------ */

/* The run a caller may talk to, or NULL with the error that says why. */
static Run *
session_get_command (TerretShellSession  *self,
                     const char          *what,
                     GError             **error)
{
  Run *run;

  g_mutex_lock (&self->mutex);
  run = self->run;
  g_mutex_unlock (&self->mutex);

  if (run == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "Nothing is running in the shell session to %s", what);
  return run;
}

/**
 * terret_shell_session_send_input:
 * @self: a session
 * @data: the bytes to type into the terminal
 * @error: return location for a #GError
 *
 * Writes @data to the terminal of the command running in the session (a
 * run in flight or a detached command), behind anything written before
 * and without blocking: what the terminal cannot take now is queued and
 * written as the command reads. The terminal is raw, so the bytes reach
 * the command as they are; its special characters still work (0x03 is an
 * interrupt, 0x04 end of input at the start of a line). Input sent while
 * the session's shell is still starting follows the command.
 *
 * Call it from the thread that runs the session's main context.
 *
 * Returns: %TRUE when the bytes were queued; %FALSE with
 *   %TERRET_EXEC_ERROR_INVALID_REQUEST when nothing is running
 *
 * Since: 0.1
 */
gboolean
terret_shell_session_send_input (TerretShellSession  *self,
                                 GBytes              *data,
                                 GError             **error)
{
  const guint8 *bytes;
  gsize len = 0;
  Run *run;

  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((run = session_get_command (self, "send input to", error)) == NULL)
    return FALSE;

  bytes = g_bytes_get_data (data, &len);
  if (run->phase == PHASE_HANDSHAKE)
    {
      if (run->early_input == NULL)
        run->early_input = g_byte_array_new ();
      g_byte_array_append (run->early_input, bytes, len);
      return TRUE;
    }

  g_byte_array_append (run->out, bytes, len);
  /* A terminal that is gone ends the run, which says so; the input had
   * nowhere to go, like keys typed at a closed terminal. */
  run_flush (run);
  return TRUE;
}

/**
 * terret_shell_session_interrupt:
 * @self: a session
 * @error: return location for a #GError
 *
 * Types ^C into the terminal of the command running in the session (a
 * run in flight or a detached command): SIGINT for the session's process
 * group. A command that ends on it completes with status 130 (or its
 * own), and the session's shell and its cwd and variables stay. A
 * command that reacts to it by writing output (a REPL back at its
 * prompt, a trap) goes on. One that stays silent and running for
 * [property@Terret.ShellSession:interrupt-grace] seconds is killed with
 * the shell, and its result says the next run starts a fresh session.
 *
 * Call it from the thread that runs the session's main context.
 *
 * Returns: %TRUE when the interrupt was queued; %FALSE with
 *   %TERRET_EXEC_ERROR_INVALID_REQUEST when nothing is running
 *
 * Since: 0.1
 */
gboolean
terret_shell_session_interrupt (TerretShellSession  *self,
                                GError             **error)
{
  Run *run;

  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((run = session_get_command (self, "interrupt", error)) == NULL)
    return FALSE;

  if (run->phase == PHASE_HANDSHAKE)
    {
      run->interrupt_requested = TRUE;
      return TRUE;
    }

  run_queue_interrupt (run);
  run_flush (run);
  return TRUE;
}

static gboolean
run_on_poll_over (gpointer user_data)
{
  run_poll_return (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
run_on_poll_cancelled (GCancellable *cancellable,
                       gpointer      user_data)
{
  Run *run = user_data;
  g_autoptr(GTask) task = g_steal_pointer (&run->poll_task);
  GError *error = NULL;

  /* Only the poll ends: the command and its output are still there for
   * the next one. */
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  g_cancellable_set_error_if_cancelled (cancellable, &error);
  g_task_return_error (task, error);
  return G_SOURCE_REMOVE;
}

/* How many chunks a poll reads at once before it waits: enough for what
 * a terminal holds, bounded so a command printing without pause cannot
 * keep the poll here. */
#define POLL_READS 16

/**
 * terret_shell_session_poll_async:
 * @self: a session
 * @wait: seconds to wait for new output at most; 0 returns at once
 * @cancellable: (nullable): a #GCancellable; cancelling ends the poll,
 *   not the command
 * @callback: (scope async) (closure user_data): called when the poll is over
 * @user_data: data for @callback
 *
 * Collects the output of a command a timeout detached from: it returns
 * as soon as there is output since the previous result (the detaching
 * run's, or the last poll's), or the command ended, or @wait passed. See
 * [method@Terret.Executor.poll_async] for the result and the errors.
 *
 * From here on the command is read on the caller's thread-default main
 * context, which should be iterated until the command ended for its end
 * to be seen between polls.
 *
 * Since: 0.1
 */
void
terret_shell_session_poll_async (TerretShellSession  *self,
                                 double               wait,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  TerretResult *parked;
  Run *run;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));
  g_return_if_fail (wait >= 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, terret_shell_session_poll_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  g_mutex_lock (&self->mutex);
  parked = g_steal_pointer (&self->parked);
  run = self->run;
  g_mutex_unlock (&self->mutex);

  if (parked != NULL)
    {
      g_task_return_pointer (task, parked, g_object_unref);
      return;
    }
  if (run == NULL)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                               "Nothing is running in the shell session to poll; only a "
                               "command a timeout detached from can be polled");
      return;
    }
  if (run->task != NULL)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                               "A run is still waiting for the command in this shell session; "
                               "its result will carry the output");
      return;
    }
  if (run->poll_task != NULL)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                               "Another poll of this shell session is waiting");
      return;
    }

  run_adopt_context (run);
  run->poll_task = g_steal_pointer (&task);

  /* What already sits on the terminal, before deciding to wait: a caller
   * that polls without iterating its main context in between still gets
   * every byte, and the end. */
  for (guint i = 0; i < POLL_READS && run->read_source != NULL; i++)
    {
      gboolean would_block;

      /* The run ended, and the poll was answered. */
      if (!run_read_once (run, &would_block))
        return;
      /* Answered with news; the command goes on. */
      if (run->poll_task == NULL)
        return;
      if (would_block)
        break;
    }

  if (wait <= 0 || run_has_news (run))
    {
      run_poll_return (run);
      return;
    }

  run->poll_timeout_source = g_timeout_source_new (seconds_to_msec (wait));
  g_source_set_static_name (run->poll_timeout_source, "[terret] poll wait");
  g_source_set_callback (run->poll_timeout_source, run_on_poll_over, run, NULL);
  g_source_attach (run->poll_timeout_source, run->context);

  if (cancellable != NULL)
    {
      run->poll_cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_static_name (run->poll_cancel_source, "[terret] poll cancel");
      g_source_set_callback (run->poll_cancel_source, G_SOURCE_FUNC (run_on_poll_cancelled),
                             run, NULL);
      g_source_attach (run->poll_cancel_source, run->context);
    }
}

/**
 * terret_shell_session_poll_finish:
 * @self: a session
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes [method@Terret.ShellSession.poll_async].
 *
 * Returns: (transfer full): the output since the previous result, with
 *   [method@Terret.Result.get_running] %TRUE while the command goes on,
 *   or its status and cwd once it ended; %NULL with @error set
 *
 * Since: 0.1
 */
TerretResult *
terret_shell_session_poll_finish (TerretShellSession  *self,
                                  GAsyncResult        *result,
                                  GError             **error)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --- Properties ------------------------------------------------------- */

/**
 * terret_shell_session_new:
 * @channel: the channel that will carry the session's shell
 *
 * Creates a session. No shell is started until the first run.
 *
 * Returns: (transfer full): a new session
 *
 * Since: 0.1
 */
TerretShellSession *
terret_shell_session_new (TerretShellChannel *channel)
{
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (channel), NULL);

  return g_object_new (TERRET_TYPE_SHELL_SESSION, "channel", channel, NULL);
}

/**
 * terret_shell_session_get_channel:
 * @self: a session
 *
 * Gets the channel the session was created with.
 *
 * Returns: (transfer none): the channel carrying the session's shell
 *
 * Since: 0.1
 */
TerretShellChannel *
terret_shell_session_get_channel (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);

  return self->channel;
}

/**
 * terret_shell_session_get_shell:
 * @self: a session
 *
 * Gets the bash the session starts its next shell with.
 *
 * Returns: the bash the next shell is started with
 *
 * Since: 0.1
 */
const char *
terret_shell_session_get_shell (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);

  return self->shell;
}

/**
 * terret_shell_session_set_shell:
 * @self: a session
 * @shell: (type filename): a path to bash, or a name looked up in `PATH`
 *
 * Sets the bash that the next shell is started with; a running shell is
 * not affected.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_shell (TerretShellSession *self,
                                const char         *shell)
{
  gboolean changed;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));
  g_return_if_fail (shell != NULL && *shell != '\0');

  g_mutex_lock (&self->mutex);
  changed = _terret_set_str (&self->shell, shell);
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHELL]);
}

/**
 * terret_shell_session_get_environ:
 * @self: a session
 *
 * Gets the environment the next shell starts with.
 *
 * Returns: (array zero-terminated=1) (nullable) (transfer none): the
 *   environment the next shell starts with, or %NULL for the default
 *
 * Since: 0.1
 */
const char * const *
terret_shell_session_get_environ (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);

  return (const char * const *)self->environ;
}

/**
 * terret_shell_session_set_environ:
 * @self: a session
 * @envp: (array zero-terminated=1) (nullable): the whole environment of
 *   the next shell, or %NULL for the host's with the defaults of
 *   [func@Terret.ShellSession.build_environ]
 *
 * Sets the environment the next shell starts with; a running shell keeps
 * its own.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_environ (TerretShellSession *self,
                                  const char * const *envp)
{
  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));

  g_mutex_lock (&self->mutex);
  g_strfreev (self->environ);
  self->environ = g_strdupv ((char **)envp);
  g_mutex_unlock (&self->mutex);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENVIRON]);
}

/**
 * terret_shell_session_get_cwd:
 * @self: a session
 *
 * Gets the working directory the next shell starts in.
 *
 * Returns: (nullable) (type filename): the directory the next shell
 *   starts in, or %NULL for the host's
 *
 * Since: 0.1
 */
const char *
terret_shell_session_get_cwd (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), NULL);

  return self->cwd;
}

/**
 * terret_shell_session_set_cwd:
 * @self: a session
 * @cwd: (nullable) (type filename): the directory the next shell starts
 *   in, or %NULL for the host's
 *
 * Sets where the next shell starts; a running shell keeps its own cwd.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_cwd (TerretShellSession *self,
                              const char         *cwd)
{
  gboolean changed;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));

  g_mutex_lock (&self->mutex);
  changed = _terret_set_str (&self->cwd, cwd);
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * terret_shell_session_get_max_output:
 * @self: a session
 *
 * Gets the cap on the output a run keeps.
 *
 * Returns: how many bytes of a run's output are kept
 *
 * Since: 0.1
 */
guint64
terret_shell_session_get_max_output (TerretShellSession *self)
{
  guint64 value;

  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), 0);

  g_mutex_lock (&self->mutex);
  value = self->max_output;
  g_mutex_unlock (&self->mutex);

  return value;
}

/**
 * terret_shell_session_set_max_output:
 * @self: a session
 * @max_output: bytes of a run's output to keep
 *
 * Sets the cap on a run's output, from the next run on. It is a memory
 * bound: past it the head is kept, the rest counted and dropped.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_max_output (TerretShellSession *self,
                                     guint64             max_output)
{
  gboolean changed;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));

  g_mutex_lock (&self->mutex);
  changed = self->max_output != max_output;
  self->max_output = max_output;
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_OUTPUT]);
}

/**
 * terret_shell_session_get_handshake_timeout:
 * @self: a session
 *
 * Gets how long a new shell has to answer its start-up handshake.
 *
 * Returns: seconds a new shell has to answer its start-up handshake
 *
 * Since: 0.1
 */
double
terret_shell_session_get_handshake_timeout (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), 0);

  return self->handshake_timeout;
}

/**
 * terret_shell_session_set_handshake_timeout:
 * @self: a session
 * @seconds: seconds a new shell has to answer its start-up handshake
 *
 * Sets the handshake budget of the next shell started.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_handshake_timeout (TerretShellSession *self,
                                            double              seconds)
{
  gboolean changed;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));
  g_return_if_fail (seconds > 0);

  g_mutex_lock (&self->mutex);
  changed = self->handshake_timeout != seconds;
  self->handshake_timeout = seconds;
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HANDSHAKE_TIMEOUT]);
}

/**
 * terret_shell_session_get_interrupt_grace:
 * @self: a session
 *
 * Gets how long an interrupted command may stay silent and running
 * before it is killed.
 *
 * Returns: the grace in seconds
 *
 * Since: 0.1
 */
double
terret_shell_session_get_interrupt_grace (TerretShellSession *self)
{
  double value;

  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), 0);

  g_mutex_lock (&self->mutex);
  value = self->interrupt_grace;
  g_mutex_unlock (&self->mutex);

  return value;
}

/**
 * terret_shell_session_set_interrupt_grace:
 * @self: a session
 * @seconds: the grace in seconds
 *
 * Sets how long a command interrupted from the next run on may stay
 * silent and running before it is killed with the shell.
 *
 * Since: 0.1
 */
void
terret_shell_session_set_interrupt_grace (TerretShellSession *self,
                                          double              seconds)
{
  gboolean changed;

  g_return_if_fail (TERRET_IS_SHELL_SESSION (self));
  g_return_if_fail (seconds > 0);

  g_mutex_lock (&self->mutex);
  changed = self->interrupt_grace != seconds;
  self->interrupt_grace = seconds;
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INTERRUPT_GRACE]);
}

/**
 * terret_shell_session_is_busy:
 * @self: a session
 *
 * Tells whether the session is running a command or closing.
 *
 * Returns: whether a run (or a close) is in flight
 *
 * Since: 0.1
 */
gboolean
terret_shell_session_is_busy (TerretShellSession *self)
{
  gboolean busy;

  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), FALSE);

  g_mutex_lock (&self->mutex);
  busy = self->busy;
  g_mutex_unlock (&self->mutex);

  return busy;
}

/**
 * terret_shell_session_get_pid:
 * @self: a session
 *
 * Gets the process carrying the session's shell.
 *
 * Returns: the pid of the process carrying the session's shell (bash
 *   itself for a local pty), or 0 when there is none
 *
 * Since: 0.1
 */
GPid
terret_shell_session_get_pid (TerretShellSession *self)
{
  g_return_val_if_fail (TERRET_IS_SHELL_SESSION (self), 0);

  return terret_shell_channel_get_pid (self->channel);
}

static void
terret_shell_session_dispose (GObject *object)
{
  TerretShellSession *self = (TerretShellSession *)object;

  /* A run holds a reference, so no run is in flight here. */
  if (self->channel != NULL)
    session_shut_down (self);

  G_OBJECT_CLASS (terret_shell_session_parent_class)->dispose (object);
}

static void
terret_shell_session_finalize (GObject *object)
{
  TerretShellSession *self = (TerretShellSession *)object;

  g_clear_object (&self->channel);
  g_clear_pointer (&self->read_buffer, g_free);
  g_clear_pointer (&self->shell, g_free);
  g_clear_pointer (&self->environ, g_strfreev);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->pending_notice, g_free);
  g_clear_object (&self->parked);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_shell_session_parent_class)->finalize (object);
}

static void
terret_shell_session_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (object);

  switch (prop_id)
    {
    case PROP_CHANNEL:
      g_value_set_object (value, self->channel);
      break;
    case PROP_SHELL:
      g_value_set_string (value, self->shell);
      break;
    case PROP_ENVIRON:
      g_value_set_boxed (value, self->environ);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_MAX_OUTPUT:
      g_value_set_uint64 (value, terret_shell_session_get_max_output (self));
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      g_value_set_double (value, self->handshake_timeout);
      break;
    case PROP_INTERRUPT_GRACE:
      g_value_set_double (value, terret_shell_session_get_interrupt_grace (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
terret_shell_session_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (object);

  switch (prop_id)
    {
    case PROP_CHANNEL:
      self->channel = g_value_dup_object (value);
      break;
    case PROP_SHELL:
      terret_shell_session_set_shell (self, g_value_get_string (value));
      break;
    case PROP_ENVIRON:
      terret_shell_session_set_environ (self, g_value_get_boxed (value));
      break;
    case PROP_CWD:
      terret_shell_session_set_cwd (self, g_value_get_string (value));
      break;
    case PROP_MAX_OUTPUT:
      terret_shell_session_set_max_output (self, g_value_get_uint64 (value));
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      terret_shell_session_set_handshake_timeout (self, g_value_get_double (value));
      break;
    case PROP_INTERRUPT_GRACE:
      terret_shell_session_set_interrupt_grace (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
terret_shell_session_class_init (TerretShellSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_shell_session_dispose;
  object_class->finalize = terret_shell_session_finalize;
  object_class->get_property = terret_shell_session_get_property;
  object_class->set_property = terret_shell_session_set_property;

  /**
   * TerretShellSession:channel:
   *
   * The channel carrying the session's shell.
   *
   * Since: 0.1
   */
  properties[PROP_CHANNEL] =
    g_param_spec_object ("channel", NULL, NULL,
                         TERRET_TYPE_SHELL_CHANNEL,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:shell:
   *
   * The bash the next shell is started with: a path, or a name looked up
   * in `PATH`.
   *
   * Since: 0.1
   */
  properties[PROP_SHELL] =
    g_param_spec_string ("shell", NULL, NULL,
                         "bash",
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:environ:
   *
   * The whole environment of the next shell, or %NULL for the host's with
   * the defaults of [func@Terret.ShellSession.build_environ].
   *
   * Since: 0.1
   */
  properties[PROP_ENVIRON] =
    g_param_spec_boxed ("environ", NULL, NULL,
                        G_TYPE_STRV,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:cwd:
   *
   * The directory the next shell starts in, or %NULL for the host's.
   *
   * Since: 0.1
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:max-output:
   *
   * Bytes of a run's output that are kept.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_OUTPUT] =
    g_param_spec_uint64 ("max-output", NULL, NULL,
                         0, G_MAXUINT64, TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:handshake-timeout:
   *
   * Seconds a new shell has to answer its start-up handshake.
   *
   * Since: 0.1
   */
  properties[PROP_HANDSHAKE_TIMEOUT] =
    g_param_spec_double ("handshake-timeout", NULL, NULL,
                         0.001, G_MAXDOUBLE, TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretShellSession:interrupt-grace:
   *
   * Seconds an interrupted command may stay silent and running before it
   * is killed with the shell.
   *
   * Since: 0.1
   */
  properties[PROP_INTERRUPT_GRACE] =
    g_param_spec_double ("interrupt-grace", NULL, NULL,
                         0.001, G_MAXDOUBLE, TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
terret_shell_session_init (TerretShellSession *self)
{
  g_mutex_init (&self->mutex);
  self->shell = g_strdup ("bash");
  self->max_output = TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT;
  self->handshake_timeout = TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT;
  self->interrupt_grace = TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE;
}
