/* terret-input-wait.c: a run's watch for its command waiting for input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whether a command waits for input is the kernel's to say
 * (terret-launcher-input.c, where the terminal is); this keeps what a
 * run makes of the looks: the last line printed as the prompt, since
 * when it waits, the bounded few looks again after an event, and the
 * readers stopped for an end of file. The engines decide when to look:
 * on an event (the output went quiet, a poll, a list).
 */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "terret-input-wait-private.h"

/* What a run keeps of its last line: enough for a prompt and the
 * terminal control sequences around it. */
#define LINE_KEEP (4 * TERRET_INPUT_PROMPT_MAX)

/* A look that finds no wait looks again this much later, then twice as
 * late each time, this many times (about 13 s in all) after the event
 * that started it: a program that is still starting (python behind a
 * version manager's shims, a pager behind git) settles into its read
 * within that, and `sleep 1; read x` is seen too. That is a bounded
 * tail to an event, never a polling loop: after it, only a new event
 * (output, input, a poll, a list) looks again. */
#define SETTLE_FIRST_SECONDS 0.1
#define SETTLE_LOOKS 7

/* How many looks a reader stopped for an end of file has to stop in. */
#define STOP_LOOKS 40

struct _TerretInputWatch
{
  TerretInputWait wait;
  GByteArray *line;             /* (owned) what was printed since the last newline */
  guint looks;                  /* looks since the last event that found no wait */
  guint answers;                /* waits the run answered itself (on-input eof) */
  GArray *readers;              /* (owned) of GPid: who read the terminal at the last look */
  GArray *stopped;              /* (owned) of GPid: readers stopped for an end of file */
  guint stop_looks;             /* looks at them since */
  guint news : 1;               /* a wait began that no result told yet */
};

/* --- The prompt ------------------------------------------------------------ */

/* The last line printed, as a description: without terminal control
 * sequences and control characters, what follows the last carriage
 * return that left something, valid UTF-8, at most
 * TERRET_INPUT_PROMPT_MAX bytes of its end. NULL when nothing is left. */
static char *
make_prompt (const guint8 *data,
             gsize         len)
{
  g_autoptr(GString) text = g_string_sized_new (len);
  g_autofree char *valid = NULL;
  gsize start = 0;
  gsize n;

  for (gsize i = 0; i < len; i++)
    {
      guint8 c = data[i];

      if (c == 0x1b && i + 1 < len)
        {
          guint8 kind = data[++i];

          if (kind == '[')
            {
              /* CSI: parameters, then a final byte. */
              while (i + 1 < len && !(data[i + 1] >= 0x40 && data[i + 1] <= 0x7e))
                i++;
              i++;
            }
          else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^')
            {
              /* OSC and friends: up to BEL or ST. */
              while (i + 1 < len && data[i + 1] != 0x07 &&
                     !(data[i + 1] == 0x1b && i + 2 < len && data[i + 2] == '\\'))
                i++;
              i += (i + 1 < len && data[i + 1] == 0x1b) ? 2 : 1;
            }
          continue;
        }
      if (c == '\r')
        {
          /* A line redrawn: what follows counts, unless nothing does. */
          gboolean more = FALSE;

          for (gsize j = i + 1; j < len && !more; j++)
            more = !g_ascii_isspace (data[j]);
          if (more)
            g_string_truncate (text, 0);
          continue;
        }
      if (c == '\b')
        {
          if (text->len > 0)
            g_string_truncate (text, text->len - 1);
          continue;
        }
      if (c < 0x20 && c != '\t')
        continue;
      if (c == 0x7f)
        continue;
      g_string_append_c (text, (char)c);
    }

  valid = g_utf8_make_valid (text->str, text->len);
  g_strstrip (valid);
  n = strlen (valid);
  if (n == 0)
    return NULL;
  if (n > TERRET_INPUT_PROMPT_MAX)
    {
      start = n - TERRET_INPUT_PROMPT_MAX;
      while (start < n && ((guchar)valid[start] & 0xc0) == 0x80)
        start++;
    }
  return g_strdup (valid + start);
}

/* --- A run's watch -------------------------------------------------------- */

TerretInputWatch *
_terret_input_watch_new (void)
{
  TerretInputWatch *watch = g_new0 (TerretInputWatch, 1);

  watch->wait.state = TERRET_INPUT_STATE_NOT_WAITING;
  watch->wait.since = -1;
  watch->line = g_byte_array_new ();
  watch->readers = g_array_new (FALSE, FALSE, sizeof (GPid));
  watch->stopped = g_array_new (FALSE, FALSE, sizeof (GPid));
  return watch;
}

void
_terret_input_watch_free (TerretInputWatch *watch)
{
  _terret_input_wait_clear (&watch->wait);
  _terret_input_watch_continue (watch);
  g_byte_array_unref (watch->line);
  g_array_unref (watch->readers);
  g_array_unref (watch->stopped);
  g_free (watch);
}

static void
watch_not_waiting (TerretInputWatch *watch)
{
  if (watch->wait.state != TERRET_INPUT_STATE_UNKNOWN)
    watch->wait.state = TERRET_INPUT_STATE_NOT_WAITING;
  watch->wait.since = -1;
  watch->wait.secret = FALSE;
  watch->wait.pager = FALSE;
  g_clear_pointer (&watch->wait.prompt, g_free);
}

/* The command printed @data: it ran, so whatever it waited for is over,
 * and its last line may be a prompt. */
void
_terret_input_watch_output (TerretInputWatch *watch,
                            const guint8     *data,
                            gsize             len)
{
  const guint8 *newline = memrchr (data, '\n', len);

  if (newline != NULL)
    {
      g_byte_array_set_size (watch->line, 0);
      len -= (gsize)(newline + 1 - data);
      data = newline + 1;
    }
  if (len >= LINE_KEEP)
    {
      g_byte_array_set_size (watch->line, 0);
      g_byte_array_append (watch->line, data + len - LINE_KEEP, LINE_KEEP);
    }
  else
    {
      if (watch->line->len + len > LINE_KEEP)
        g_byte_array_remove_range (watch->line, 0, watch->line->len + len - LINE_KEEP);
      g_byte_array_append (watch->line, data, len);
    }
  watch_not_waiting (watch);
  watch->looks = 0;
}

/* Input was sent: the command wakes to read it. On a terminal with
 * echo the answer would end the prompt's line; here nothing is echoed,
 * so the line starts afresh: a second prompt is not the first one's
 * continuation. */
void
_terret_input_watch_input (TerretInputWatch *watch)
{
  g_byte_array_set_size (watch->line, 0);
  watch_not_waiting (watch);
  watch->looks = 0;
}

/* The most readers a look keeps for an end of file. */
#define READERS_MAX 16

/*
 * _terret_input_watch_look:
 * @terminal: the master of a terminal of this host
 * @run_start: when the run started, wall clock microseconds
 *
 * Looks at @terminal now. Returns TRUE when this look found a wait that
 * the one before did not: the run hands it on.
 */
gboolean
_terret_input_watch_look (TerretInputWatch *watch,
                          int               terminal,
                          gint64            run_start)
{
  pid_t readers[READERS_MAX];
  size_t n_readers = 0;
  unsigned flags = 0;
  TerretWireInput found = terret_input_look (terminal, &flags, readers, READERS_MAX, &n_readers);

  g_array_set_size (watch->readers, 0);
  for (size_t i = 0; i < n_readers; i++)
    g_array_append_val (watch->readers, (GPid){ readers[i] });
  return _terret_input_watch_note (watch, found, flags, run_start);
}

/*
 * _terret_input_watch_note:
 * @found: what a look found, here or where the terminal is
 * @flags: TERRET_WIRE_INPUT_*
 *
 * As _terret_input_watch_look(), for a look made elsewhere (a far
 * side's launcher): its readers are not this host's to stop.
 */
gboolean
_terret_input_watch_note (TerretInputWatch *watch,
                          TerretWireInput   found,
                          unsigned          flags,
                          gint64            run_start)
{
  gboolean secret = (flags & TERRET_WIRE_INPUT_SECRET) != 0;
  gboolean pager = (flags & TERRET_WIRE_INPUT_PAGER) != 0;
  gboolean was_waiting = watch->wait.state == TERRET_INPUT_STATE_WAITING;

  switch (found)
    {
    case TERRET_WIRE_INPUT_WAITING:
      watch->looks = 0;
      watch->wait.secret = secret;
      watch->wait.pager = pager;
      if (was_waiting)
        return FALSE;
      watch->wait.state = TERRET_INPUT_STATE_WAITING;
      watch->wait.since = MAX (0, g_get_real_time () - run_start) / (double)G_USEC_PER_SEC;
      g_free (watch->wait.prompt);
      watch->wait.prompt = make_prompt (watch->line->data, watch->line->len);
      watch->news = TRUE;
      return TRUE;

    case TERRET_WIRE_INPUT_BUSY:
      watch->looks++;
      watch->wait.state = TERRET_INPUT_STATE_NOT_WAITING;
      watch_not_waiting (watch);
      return FALSE;

    case TERRET_WIRE_INPUT_ELSEWHERE:
      watch->looks++;
      watch->wait.state = TERRET_INPUT_STATE_NOT_WAITING;
      watch_not_waiting (watch);
      return FALSE;

    case TERRET_WIRE_INPUT_UNKNOWN:
    default:
      watch->looks = 0;
      watch_not_waiting (watch);
      watch->wait.state = TERRET_INPUT_STATE_UNKNOWN;
      return FALSE;
    }
}

/* When to look again without a new event: while the looks since the
 * last one found no wait, a bounded few times; < 0: not before the next
 * event. */
double
_terret_input_watch_settle (TerretInputWatch *watch)
{
  if (watch->looks == 0 || watch->looks > SETTLE_LOOKS)
    return -1;
  return SETTLE_FIRST_SECONDS * (1u << (watch->looks - 1));
}

/* Whether a wait began that no result has told yet. */
gboolean
_terret_input_watch_is_news (TerretInputWatch *watch)
{
  return watch->news;
}

/* A result told the wait. */
void
_terret_input_watch_told (TerretInputWatch *watch)
{
  watch->news = FALSE;
}

const TerretInputWait *
_terret_input_watch_get (TerretInputWatch *watch)
{
  return &watch->wait;
}

/* The run answers a wait itself: how many times now. */
guint
_terret_input_watch_count_answer (TerretInputWatch *watch)
{
  return ++watch->answers;
}

/* --- An end of file for a read already waiting ----------------------------
 *
 * The protocol's terminal is not canonical, where a read never returns
 * an end of file; and a read that began so stays so when the terminal
 * becomes canonical. So the readers are stopped (SIGSTOP: a read asleep
 * returns to be restarted), the terminal made canonical and ^D typed
 * while they are stopped, and then they are continued: each read starts
 * again, canonical, and finds the end of file. With job control off every
 * process of a session is in its shell's group, so a stop can never leave
 * an orphaned group that the kernel would hang up. */

/* Stops the readers the last look found. FALSE when there were none. */
gboolean
_terret_input_watch_stop (TerretInputWatch *watch)
{
  g_array_set_size (watch->stopped, 0);
  watch->stop_looks = 0;
  for (guint i = 0; i < watch->readers->len; i++)
    {
      GPid pid = g_array_index (watch->readers, GPid, i);

      if (kill (pid, SIGSTOP) == 0)
        g_array_append_val (watch->stopped, pid);
    }
  return watch->stopped->len > 0;
}

/* Whether the readers it stopped are stopped now (or gone); after a
 * bounded few looks, as good as stopped. */
gboolean
_terret_input_watch_is_stopped (TerretInputWatch *watch)
{
  if (++watch->stop_looks > STOP_LOOKS)
    return TRUE;
  for (guint i = 0; i < watch->stopped->len; i++)
    if (!terret_input_is_stopped (g_array_index (watch->stopped, GPid, i)))
      return FALSE;
  return TRUE;
}

/* Whether readers are stopped for an end of file. */
gboolean
_terret_input_watch_is_stopping (TerretInputWatch *watch)
{
  return watch->stopped->len > 0;
}

/* Continues what _terret_input_watch_stop() stopped. */
void
_terret_input_watch_continue (TerretInputWatch *watch)
{
  for (guint i = 0; i < watch->stopped->len; i++)
    kill (g_array_index (watch->stopped, GPid, i), SIGCONT);
  g_array_set_size (watch->stopped, 0);
}
