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
 * _terret_shell_state_new_shell:
 *
 * The first line to a new shell: a fresh key, the exchange count from 0,
 * nothing set aside; the handshake, or for a @remote terminal the line
 * that sets its modes, which the handshake then follows. Both are
 * answered by a marker of exchange 0.
 */
GByteArray *
_terret_shell_state_new_shell (TerretShellState *state,
                               gboolean          remote)
{
  *state = (TerretShellState) { 0 };
  _terret_protocol_key_init (&state->key);
  return remote ? _terret_protocol_modes (&state->key) : _terret_protocol_handshake (&state->key);
}

/* The handshake, after the modes of a remote terminal were set. */
GByteArray *
_terret_shell_state_handshake (TerretShellState *state)
{
  return _terret_protocol_handshake (&state->key);
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
 * The request of @command. The fast path is for a shell known clean
 * running a command whose text cannot make it otherwise; a remote shell
 * also needs its terminal's modes put back, which only the careful
 * harness does. *@careful says which path the request takes.
 *
 * A careful request runs the command at the top level, through an alias
 * (see _terret_protocol_choose_carry()), unless the shell cannot have it:
 * a PROMPT_COMMAND or PS0 would run for both of the alias's lines, and a
 * shell whose aliases do not expand would not run it; @in_eval asks for
 * an eval too (a command left open, to learn what is wrong with it). A
 * fast one runs in an eval, which costs a prompt less: in a shell known
 * clean nothing can tell the eval is there (no xtrace, no trap reads
 * `caller`), short of the command turning xtrace on where no word shows
 * it.
 */
GByteArray *
_terret_shell_state_request (TerretShellState *state,
                             const char       *command,
                             const char       *cwd,
                             const char * const *env,
                             gboolean          remote,
                             gboolean          in_eval,
                             gboolean         *careful,
                             guint64          *expected)
{
  TerretCarry carry;

  if (_terret_protocol_may_persist (command))
    state->always_careful = TRUE;
  *careful = state->careful || state->always_careful || remote ||
             _terret_protocol_needs_care (command);
  carry = _terret_protocol_choose_carry (command);
  if (!*careful || state->hooks || state->no_alias || in_eval)
    carry = TERRET_CARRY_EVAL;
  *expected = ++state->exchange;
  return _terret_protocol_request (command, cwd, env, *expected, carry, *careful,
                                   *careful && _terret_protocol_may_exec (command), remote);
}

/*
 * _terret_shell_state_take_marker:
 *
 * What an exchange's marker says the next request must do; @careful is
 * the path the exchange took. A careful harness also says whether a
 * PROMPT_COMMAND or PS0 is set (flags c, z); any marker may say that
 * aliases do not expand (A from the harness, U from a request whose alias
 * did not run).
 */
void
_terret_shell_state_take_marker (TerretShellState   *state,
                                 const TerretMarker *marker,
                                 gboolean            careful)
{
  gboolean next_careful, recover;

  _terret_protocol_flags_state (marker, careful, &next_careful, &recover);
  state->careful = next_careful;
  state->needs_recovery = recover;
  if (careful)
    state->hooks = strpbrk (marker->flags, "cz") != NULL;
  if (strpbrk (marker->flags, "AU") != NULL)
    state->no_alias = TRUE;
}

/* The shell is gone, or is being asked to go: nothing is owed to it. */
void
_terret_shell_state_forget (TerretShellState *state)
{
  state->needs_recovery = FALSE;
}
