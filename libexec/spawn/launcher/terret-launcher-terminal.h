/* terret-launcher-terminal.h: the terminal modes a session's protocol relies on
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plain C, for the launcher (a terminal made on a far side) and the
 * library (a pty of this host) alike.
 */

#pragma once

#include <termios.h>

/* A conventional size: some programs ask, and 0x0 makes them guess. */
#define TERRET_TERMINAL_ROWS 24
#define TERRET_TERMINAL_COLUMNS 80

/* The modes, applied to @modes:
 * - no echo, so requests do not come back as output;
 * - no output processing, so a newline is not rewritten as CR-LF and the
 *   bytes are the command's;
 * - non-canonical input, VMIN 1 VTIME 0, so no line length limit applies
 *   to a request and no byte is special but the signal characters;
 * - no software flow control, so a stray ^S cannot wedge the stream;
 * - no input translation (NL to CR, CR ignored or made NL, the eighth bit
 *   stripped, capitals lowered), so a request and the caller's input
 *   arrive as written: `stty inlcr igncr` would otherwise end every line;
 * - ISIG kept, and ^C the interrupt character, so ^C still interrupts the
 *   foreground group;
 * - ECHONL set, which without ICANON does nothing: a mark that a program
 *   turning echo off for a secret (`read -s`, a password prompt) clears
 *   with ECHO, so a wait for input can tell it waits for a secret. */
static inline void
terret_terminal_protocol_modes (struct termios *modes)
{
  modes->c_lflag &= ~(ECHO | ECHOE | ECHOK | ICANON | IEXTEN);
  modes->c_lflag |= ISIG | ECHONL;
  modes->c_oflag &= ~OPOST;
  modes->c_iflag &= ~(IXON | IXOFF | IXANY | INLCR | IGNCR | ICRNL | ISTRIP | IUCLC);
  modes->c_cc[VMIN] = 1;
  modes->c_cc[VTIME] = 0;
  modes->c_cc[VINTR] = 0x03;
}
