/* terret-shell-state.c: what a session knows of its shell between runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The protocol (terret-shell-protocol.c) says how a line is written and a
 * marker read; this is the memory between them: which key the current
 * shell's prompts carry, which exchange is next, and whether the last
 * marker left state set aside (the next request puts it back), a shell
 * the next request must recover first, or one where any command may
 * change state unseen. A run asks it for each line and gives it each
 * marker.
 */

#include "config.h"

#include <string.h>

#include "terret-shell-state-private.h"

/*
 * _terret_shell_state_handshake:
 *
 * The set-up line of a new shell: a fresh key, the exchange count from
 * 0, nothing set aside. Its marker is exchange 0.
 */
GByteArray *
_terret_shell_state_handshake (TerretShellState *state,
                               gboolean          remote)
{
  *state = (TerretShellState) { 0 };
  _terret_protocol_key_init (&state->key);
  return _terret_protocol_handshake (&state->key, remote);
}

/*
 * _terret_shell_state_recovery:
 *
 * The careful harness alone, after the last exchange sent ended without
 * its harness's marker; *@expected is the exchange whose marker ends it.
 */
GByteArray *
_terret_shell_state_recovery (TerretShellState *state,
                              gboolean          remote,
                              guint64          *expected)
{
  guint64 abandoned = state->exchange;

  *expected = ++state->exchange;
  return _terret_protocol_recovery (*expected, abandoned, remote);
}

/*
 * _terret_shell_state_request:
 *
 * The request line of @command. The fast path is for a shell known clean
 * running a command whose text cannot make it otherwise; a remote shell
 * also needs its terminal's modes put back, which only the careful
 * harness does. *@careful says which path the line takes.
 */
GByteArray *
_terret_shell_state_request (TerretShellState *state,
                             const char       *command,
                             gboolean          remote,
                             gboolean         *careful,
                             guint64          *expected)
{
  TerretCarry carry = _terret_protocol_choose_carry (command);

  if (_terret_protocol_may_persist (command))
    state->always_careful = TRUE;
  *careful = state->careful || state->always_careful || remote ||
             _terret_protocol_needs_care (command);
  /* Verbose echoes whatever the eval still parses once it is on: the
   * harness then runs after the eval, on the line bash already read. */
  if (carry == TERRET_CARRY_EVAL && *careful &&
      (state->verbose || _terret_protocol_parse_apart (command)))
    carry = TERRET_CARRY_EVAL_APART;
  *expected = ++state->exchange;
  return _terret_protocol_request (command, *expected, carry, *careful, remote);
}

/*
 * _terret_shell_state_take_marker:
 *
 * What an exchange's marker says the next request must do; @careful is
 * the path the exchange took. Returns FALSE when a careful harness could
 * not turn off what would trace the next request (flag F): a shell the
 * session cannot use.
 */
gboolean
_terret_shell_state_take_marker (TerretShellState   *state,
                                 const TerretMarker *marker,
                                 gboolean            careful)
{
  gboolean next_careful, recover;

  _terret_protocol_flags_state (marker, careful, &next_careful, &recover);
  state->careful = next_careful;
  state->needs_recovery = recover;
  if (careful)
    state->verbose = strchr (marker->flags, 'v') != NULL;
  return strchr (marker->flags, 'F') == NULL;
}

/* The shell is gone, or is being asked to go: nothing is owed to it. */
void
_terret_shell_state_forget (TerretShellState *state)
{
  state->needs_recovery = FALSE;
}
