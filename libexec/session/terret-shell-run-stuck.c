/* terret-shell-run-stuck.c: what a shell that does not answer is doing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A shell that never answers its start-up handshake is most often
 * blocked in something its start-up files run: a lock (a version
 * manager's rehash lock, a `flock` in ~/.bashrc), a prompt, a network
 * call. Its processes, read from /proc while they still run, name it,
 * so the error alone says where to look.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "terret-process-private.h"
#include "terret-shell-channel-private.h"
#include "terret-shell-run-parts-private.h"

/* Processes named at most. */
#define STUCK_MAX 6

static char *
read_proc (int         pid,
           const char *what)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", pid, what);
  char *contents = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, NULL))
    return NULL;
  /* NUL-separated arguments, joined by spaces. */
  for (gsize i = 0; i + 1 < len; i++)
    if (contents[i] == '\0')
      contents[i] = ' ';
  g_strchomp (contents);
  return contents;
}

static void
describe_one (GString *out,
              int      pid)
{
  g_autofree char *cmdline = read_proc (pid, "cmdline");
  g_autofree char *wchan = read_proc (pid, "wchan");
  g_autofree char *valid = NULL;

  if (cmdline == NULL || *cmdline == '\0')
    return;
  valid = g_utf8_make_valid (cmdline, -1);
  if (out->len > 0)
    g_string_append (out, ", ");
  g_string_append_printf (out, "pid %d `%s`", pid, valid);
  if (wchan != NULL && *wchan != '\0' && strcmp (wchan, "0") != 0)
    g_string_append_printf (out, " (waiting in %s)", wchan);
}

/* How long a far side's unit has to name what it contains: a bound,
 * not a step (it answers at once). */
#define FAR_ACCOUNT_MSEC 1000

/* A far side's processes are not this host's to read: its unit names
 * them (pid and command line, in its pid namespace, breadth first), the
 * deepest first here too. */
static char *
describe_far (TerretProcess *process)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GArray) entries = NULL;
  guint n;

  _terret_process_take_account (process, FAR_ACCOUNT_MSEC);
  entries = _terret_process_get_stopped (process);
  n = MIN (entries->len, STUCK_MAX);
  for (guint i = n; i > 0; i--)
    {
      const TerretStopped *entry = &g_array_index (entries, TerretStopped, i - 1);

      if (entry->command == NULL || *entry->command == '\0')
        continue;
      if (out->len > 0)
        g_string_append (out, ", ");
      g_string_append_printf (out, "pid %d `%s`", entry->pid, entry->command);
    }
  if (out->len == 0)
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/*
 * _terret_shell_run_describe_stuck:
 *
 * What the shell of @channel and what it started were running: "pid 12
 * `bash ...`, pid 13 `flock ~/.lock true` (waiting in ...)", read from
 * /proc for a shell on this host, named by its unit for a far side's
 * (no wait channel then); %NULL when nothing is known (a shell behind a
 * client, no /proc).
 */
char *
_terret_shell_run_describe_stuck (TerretShellChannel *channel)
{
  TerretProcess *process = terret_shell_channel_get_process (channel);
  g_autoptr(GString) out = g_string_new (NULL);
  int pids[STUCK_MAX];
  guint n = 0;

  if (process == NULL || terret_process_check_exited (process))
    return NULL;
  if (_terret_shell_channel_get_reach (channel) == TERRET_SHELL_FAR)
    return describe_far (process);

  pids[n++] = terret_process_get_pid (process);
  for (guint i = 0; i < n && n < STUCK_MAX; i++)
    {
      g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", pids[i], pids[i]);
      g_autofree char *children = NULL;
      g_auto(GStrv) words = NULL;

      if (!g_file_get_contents (path, &children, NULL, NULL))
        continue;
      words = g_strsplit (children, " ", -1);
      for (guint j = 0; words[j] != NULL && n < STUCK_MAX; j++)
        if (*words[j] != '\0')
          pids[n++] = (int)g_ascii_strtoll (words[j], NULL, 10);
    }

  /* The deepest first: what the shell waits for, not the shell. */
  for (guint i = n; i > 0; i--)
    describe_one (out, pids[i - 1]);
  if (out->len == 0)
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}
