/* terret-shell-farewell.c: asking a session's shell to leave
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <poll.h>

#include "terret-launcher-wire.h"
#include "terret-process-private.h"
#include "terret-shell-session-private.h"

/* How long a closing shell gets to leave on its own before everything is
 * killed. An interactive bash ignores SIGTERM, so asking with `exit` is
 * the one cheap, clean way out (its EXIT trap runs); it is bounded
 * because a shell that is stuck never reads the request at all. */
#define FAREWELL_MSEC 1000

/* Past a close's grace, the unit's sweep is under way: a bound, not a
 * step. */
#define STOP_BOUND_MSEC 2000

/*
 * _terret_shell_farewell:
 *
 * Asks the shell on @channel to exit, reads its terminal meanwhile (a
 * shell whose terminal holds unread bytes may not finish exiting), and
 * within a budget either sees it go or gives up; then stops everything
 * the shell started, whether bash left or not (its background jobs did
 * not): SIGHUP, SIGTERM, and the sweep at @stop_grace. Blocking, so it works from any thread and wherever the caller's
 * loop is.
 */
void
_terret_shell_farewell (TerretShellChannel *channel,
                        double              stop_grace)
{
  static const char bye[] = "\\builtin exit\n";
  TerretProcess *process = terret_shell_channel_get_process (channel);
  gint64 deadline = g_get_monotonic_time () + FAREWELL_MSEC * 1000;

  if (process == NULL)
    return;

  if (!terret_process_check_exited (process) &&
      terret_shell_channel_prepare_run (channel, NULL) &&
      terret_shell_channel_write (channel, (const guint8 *)bye, sizeof bye - 1, NULL) ==
        (gssize)(sizeof bye - 1))
    {
      gboolean open = TRUE;

      while (!terret_process_check_exited (process))
        {
          gint64 left = deadline - g_get_monotonic_time ();
          struct pollfd pfds[2] = {
            { _terret_process_get_fd (process), POLLIN, 0 },
            { open ? terret_shell_channel_get_read_fd (channel) : -1, POLLIN, 0 },
          };
          guint8 buffer[4096];

          if (left <= 0 || poll (pfds, 2, (int)MAX (left / 1000, 1)) <= 0)
            break;
          if (pfds[1].revents != 0)
            open = terret_shell_channel_read (channel, buffer, sizeof buffer, NULL) != 0;
        }
    }

  /* What it left (its background jobs, a dev server) hears a closing
   * terminal's SIGHUP, then SIGTERM, and has the grace to finish; the
   * unit's sweep bounds it. */
  if (stop_grace > 0 && !_terret_process_is_gone (process))
    {
      _terret_process_stop (process, stop_grace, 0, TERRET_WIRE_STOP_CLOSE);
      _terret_process_wait_gone (process, (int)(stop_grace * 1000) + STOP_BOUND_MSEC);
    }
  terret_shell_channel_terminate (channel);
}
