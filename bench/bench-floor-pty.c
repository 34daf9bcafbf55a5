/* bench-floor-pty.c: the floor of a persistent-shell server
 *
 * One bash per session key on a raw pseudo-terminal, spoken to with
 * terret-exec's own protocol text (the handshake, then each request line
 * as the pty backend writes it, read back to its marker) in a blocking
 * loop: one write and reads to the marker per request, nothing else (no
 * main loop, no launcher, no capture bound, no timeout, no recovery).
 * What the pty backend adds to an exchange is what it costs beyond this.
 *
 *   bench-floor-pty < requests > responses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "bench-floor-common.h"
#include "terret-shell-protocol-private.h"

typedef struct
{
  pid_t pid;
  int master;
  guint64 exchange;
  gboolean careful;
  TerretProtocolKey key;
  GByteArray *buffer;           /* (owned) read, not yet answered */
} Shell;

static void
shell_free (Shell *shell)
{
  kill (-shell->pid, SIGKILL);
  close (shell->master);
  waitpid (shell->pid, NULL, 0);
  g_byte_array_unref (shell->buffer);
  g_free (shell);
}

/* The modes the pty backend sets: no echo, no output processing,
 * non-canonical input, no flow control, signals kept. */
static void
set_modes (int fd)
{
  struct termios modes;

  if (tcgetattr (fd, &modes) < 0)
    return;
  modes.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ICANON | IEXTEN);
  modes.c_lflag |= ISIG;
  modes.c_oflag &= ~OPOST;
  modes.c_iflag &= ~(IXON | IXOFF | IXANY | ISTRIP | INLCR | IGNCR | ICRNL);
  modes.c_cc[VMIN] = 1;
  modes.c_cc[VTIME] = 0;
  tcsetattr (fd, TCSANOW, &modes);
}

/* Reads until the marker of exchange @shell->exchange; the output before
 * it in @out, its status in @status. */
static gboolean
read_to_marker (Shell      *shell,
                GByteArray *out,
                int        *status)
{
  guint8 chunk[64 * 1024];
  gsize scanned = 0;

  for (;;)
    {
      gsize start;
      TerretLeadScan scan = _terret_protocol_scan (&shell->key, shell->buffer->data + scanned,
                                                   shell->buffer->len - scanned, &start);
      gssize n;

      start += scanned;
      if (scan == TERRET_LEAD_FOUND)
        {
          g_auto(TerretMarker) marker = { 0 };
          TerretMarkerParse parse = _terret_protocol_parse_marker (&shell->key,
                                                                   shell->buffer->data + start,
                                                                   shell->buffer->len - start,
                                                                   &marker);

          if (parse == TERRET_MARKER_FOUND)
            {
              gboolean ours = marker.kind == TERRET_MARKER_KIND_NORMAL &&
                              marker.exchange == shell->exchange;

              if (out != NULL)
                g_byte_array_append (out, shell->buffer->data, start);
              g_byte_array_remove_range (shell->buffer, 0, start + marker.len);
              scanned = 0;
              if (ours)
                {
                  *status = marker.status;
                  shell->careful = marker.flags != NULL && *marker.flags != '\0';
                  return TRUE;
                }
              continue;
            }
          if (parse == TERRET_MARKER_INVALID)
            {
              scanned = start + 1;
              continue;
            }
        }
      else if (scan == TERRET_LEAD_NONE)
        scanned = start;

      n = read (shell->master, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (out != NULL)
            g_byte_array_append (out, shell->buffer->data, shell->buffer->len);
          return FALSE;
        }
      g_byte_array_append (shell->buffer, chunk, n);
    }
}

static Shell *
shell_new (const char *bash)
{
  const char *argv[] = { bash, "--norc", "--noprofile", "--noediting", "-s", NULL };
  struct winsize size = { 24, 80, 0, 0 };
  g_autoptr(GByteArray) handshake = NULL;
  Shell *shell = g_new0 (Shell, 1);
  char name[128];
  int slave, status;

  shell->buffer = g_byte_array_new ();
  shell->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (shell->master < 0 || grantpt (shell->master) < 0 || unlockpt (shell->master) < 0 ||
      ptsname_r (shell->master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    {
      g_printerr ("no pseudo-terminal: %s\n", g_strerror (errno));
      exit (1);
    }
  ioctl (shell->master, TIOCSWINSZ, &size);
  set_modes (shell->master);

  shell->pid = fork ();
  if (shell->pid == 0)
    {
      setsid ();
      ioctl (slave, TIOCSCTTY, 0);
      dup2 (slave, 0);
      dup2 (slave, 1);
      dup2 (slave, 2);
      execv (argv[0], (char * const *)argv);
      _exit (127);
    }
  close (slave);

  _terret_protocol_key_init (&shell->key);
  handshake = _terret_protocol_handshake (&shell->key);
  floor_write_all (shell->master, handshake->data, handshake->len);
  if (!read_to_marker (shell, NULL, &status))
    {
      g_printerr ("the shell ended before its first prompt\n");
      exit (1);
    }
  shell->careful = FALSE;
  return shell;
}

/* FALSE when the shell ended (the command exited it): its session is
 * then dropped, and the next request starts a new one. */
static gboolean
run (Shell        *shell,
     FloorRequest *request)
{
  g_autoptr(GByteArray) line = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();
  gboolean careful = shell->careful || _terret_protocol_needs_care (request->command);
  int status = -1;

  line = _terret_protocol_request (request->command, NULL, NULL, ++shell->exchange,
                                   _terret_protocol_choose_carry (request->command),
                                   careful, _terret_protocol_may_exec (request->command), FALSE);
  floor_write_all (shell->master, line->data, line->len);
  if (!read_to_marker (shell, out, &status))
    {
      floor_respond (request, -1, out->data, out->len, NULL, 0, TRUE);
      return FALSE;
    }
  floor_respond (request, status, out->data, out->len, NULL, 0, TRUE);
  return TRUE;
}

int
main (void)
{
  g_autofree char *bash = g_find_program_in_path ("bash");
  g_autoptr(GHashTable) shells = NULL;
  FloorRequest request;

  if (bash == NULL)
    {
      g_printerr ("bash is not in PATH\n");
      return 77;
    }

  shells = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)shell_free);
  while (floor_read_request (&request))
    {
      if (g_str_equal (request.op, "run") && request.command != NULL)
        {
          Shell *shell = g_hash_table_lookup (shells, request.session);

          if (shell == NULL)
            {
              shell = shell_new (bash);
              g_hash_table_insert (shells, g_strdup (request.session), shell);
            }
          if (!run (shell, &request))
            g_hash_table_remove (shells, request.session);
        }
      else if (g_str_equal (request.op, "close"))
        {
          g_hash_table_remove (shells, request.session);
          floor_respond (&request, 0, NULL, 0, NULL, 0, TRUE);
        }
      else if (g_str_equal (request.op, "close-all"))
        {
          g_hash_table_remove_all (shells);
          floor_respond (&request, 0, NULL, 0, NULL, 0, TRUE);
        }
      else
        floor_respond_error (&request, "unavailable", "a floor server only runs commands");
      floor_clear_request (&request);
    }
  return 0;
}
