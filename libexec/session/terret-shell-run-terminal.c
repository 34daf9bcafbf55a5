/* terret-shell-run-terminal.c: what a run of a session does to its shell
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Bytes written to the shell's terminal as it takes them, ^C now or
 * behind what is queued, and the end of the shell with everything it
 * started. The lowest layer of a run: a terminal found gone is told
 * upwards through the run's on_gone, which decides how the run ends.
 */

#include "config.h"

#include <glib-unix.h>

#include "terret-process-private.h"
#include "terret-shell-run-parts-private.h"
#include "terret-util-private.h"

/* ETX: a human's ^C. The terminal turns it into SIGINT for its foreground
 * process group, which with job control off is the session's own, so it
 * reaches the command's children as well as bash. */
#define INTERRUPT_BYTE 0x03

static gboolean
run_on_writable (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  _terret_shell_run_flush (user_data);
  return G_SOURCE_CONTINUE;
}

/* Writes what it can of @out. Returns FALSE when the run has been
 * completed (the terminal is gone). */
gboolean
_terret_shell_run_flush (TerretShellRun *run)
{
  TerretShellChannel *channel = run->host.channel;

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
              g_source_set_callback (run->write_source, G_SOURCE_FUNC (run_on_writable), run, NULL);
              g_source_attach (run->write_source, run->context);
            }
          return TRUE;
        }

      if (n < 0)
        {
          /* EIO or EPIPE: the shell is gone. That is how it is learned,
           * not a failure of ours. */
          run->on_gone (run);
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

void
_terret_shell_run_queue_input (TerretShellRun *run,
                               const guint8   *data,
                               gsize           len)
{
  if (run->kind != EXCHANGE_COMMAND)
    {
      if (run->early_input == NULL)
        run->early_input = g_byte_array_new ();
      g_byte_array_append (run->early_input, data, len);
      return;
    }

  g_byte_array_append (run->out, data, len);
  /* A terminal that is gone ends the run, which says so; the input had
   * nowhere to go, like keys typed at a closed terminal. */
  _terret_shell_run_flush (run);
}

/* ^C, now: the gentler half of ending a run, where the kill that follows
 * guarantees the rest, or what takes back a command bash asks the rest
 * of. A failure means the terminal is already gone. */
void
_terret_shell_run_send_interrupt_now (TerretShellRun *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  terret_shell_channel_write (run->host.channel, &interrupt, 1, NULL);
}

/* Queues ^C behind any input already queued (the terminal sees them in
 * the order the caller sent them) and starts the grace after which a
 * command that did not react is killed. A later interrupt keeps the
 * grace that runs. */
void
_terret_shell_run_interrupt (TerretShellRun *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  if (run->kind != EXCHANGE_COMMAND)
    {
      run->interrupt_requested = TRUE;
      return;
    }

  g_byte_array_append (run->out, &interrupt, 1);
  run->interrupt_end = run->out->len;
  run->interrupt_written = FALSE;

  if (!_terret_timers_is_armed (run->host.timers, TERRET_SHELL_TIMER_ESCALATE))
    _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_ESCALATE,
                           run->plan->settings->interrupt_grace);
  _terret_shell_run_flush (run);
}

/* Kills the shell and everything it started, and waits until nothing of
 * it is left. */
void
_terret_shell_run_kill_shell (TerretShellRun *run)
{
  TerretProcess *process = terret_shell_channel_get_process (run->host.channel);

  run->host.funcs->drop_sources (run->host.session);
  /* A close's stop under way (SIGHUP, SIGTERM) has its grace first. */
  if (process != NULL)
    _terret_process_finish_stop (process);
  terret_shell_channel_terminate (run->host.channel);
}
