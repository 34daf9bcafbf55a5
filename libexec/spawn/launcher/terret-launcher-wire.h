/* terret-launcher-wire.h: what the library and its launcher say to each other
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the launcher program and the library's side of it
 * (terret-launcher-link.c); never installed. Plain C types only: the
 * launcher does not link GLib.
 *
 * Two kinds of conversation, both over SOCK_SEQPACKET sockets, so every
 * record arrives whole or not at all and the end of a peer is an EOF:
 *
 * - The request socket, one per launcher: the launcher says hello once
 *   it runs (inside its sandbox, if any; a bridge once its far side
 *   does: so a sandbox that could not be set up, or a far side that could
 *   not be reached, is an EOF before the hello); then the library sends
 *   one spawn request per process, with descriptors attached
 *   (SCM_RIGHTS), and reads one reply.
 * - The unit socket, one per process: the library's end of it is the
 *   process as far as the library is concerned. The unit (the launcher's
 *   child that owns the process and everything it starts) reports
 *   events on it; the library sends controls. The unit closes it only
 *   once nothing it contained is left alive, so the EOF is the proof that
 *   a process and all its descendants are gone.
 */

#pragma once

#include <stdint.h>

#define TERRET_WIRE_MAGIC 0x5452454cu   /* "TREL" */

/* The spawn request's descriptors, in this order: the payload (a sealed
 * memfd holding the records below), the unit's end of the unit socket,
 * then the child's descriptors the payload refers to by index. */
#define TERRET_WIRE_FD_PAYLOAD 0
#define TERRET_WIRE_FD_UNIT    1
#define TERRET_WIRE_FD_CHILD   2
#define TERRET_WIRE_MAX_FDS    16

typedef struct
{
  uint32_t magic;
  uint32_t n_fds;
} TerretWireSpawn;

typedef struct
{
  uint32_t magic;
  int32_t  error;       /* errno of a failed fork, or 0 */
  int32_t  unit_pid;
} TerretWireReply;

#define TERRET_WIRE_HELLO_MAGIC 0x5448454cu   /* "THEL" */

/* The launcher's first record: it runs, and under which seccomp mode
 * (PR_GET_SECCOMP: 2 under a filter), so a filter asked for and not in
 * force is found before anything runs. */
typedef struct
{
  uint32_t magic;
  int32_t  seccomp;
} TerretWireHello;

/* The payload: a sequence of NUL-terminated strings read in pairs, a key
 * then its value. Arguments and environment entries repeat their key, in
 * order. Numbers are decimal text. */
#define TERRET_WIRE_KEY_ARG      "arg"       /* argv[i]; argv[0] is an absolute path */
#define TERRET_WIRE_KEY_ENV      "env"       /* VARIABLE=value */
#define TERRET_WIRE_KEY_CWD      "cwd"
#define TERRET_WIRE_KEY_FD       "fd"        /* "INDEX TARGET": child descriptor INDEX becomes TARGET */
#define TERRET_WIRE_KEY_TERMINAL "terminal"  /* "INDEX": a terminal, as 0, 1, 2 and controlling tty */
#define TERRET_WIRE_KEY_LIMIT    "limit"     /* "NAME VALUE", NAME one of the limit names below */
#define TERRET_WIRE_KEY_STOP_GRACE "stop-grace" /* milliseconds: the grace of the stop a unit runs
                                                 * on its own when the library is gone (0: KILL) */

/* The limits a process may be given, by name on the wire and as bits in
 * an EXITED record's c (those it hit). The bits are TerretLimits'. */
#define TERRET_WIRE_LIMIT_MEMORY     (1u << 0)   /* "memory": bytes */
#define TERRET_WIRE_LIMIT_PROCESSES  (1u << 1)   /* "processes" */
#define TERRET_WIRE_LIMIT_CPU        (1u << 2)   /* "cpu": seconds of CPU time per process */
#define TERRET_WIRE_LIMIT_FILE_SIZE  (1u << 3)   /* "file-size": bytes */
#define TERRET_WIRE_LIMIT_OPEN_FILES (1u << 4)   /* "open-files" */

/* Unit to library. */
typedef enum
{
  TERRET_WIRE_EVENT_STARTED = 1,  /* a: the process's pid */
  TERRET_WIRE_EVENT_FAILED  = 2,  /* a: errno, b: TerretWireStage; the process never ran */
  TERRET_WIRE_EVENT_EXITED  = 3,  /* a: the process's wait status; b: 1 when what it started is
                                   * still there, 0 when the unit is about to leave; c: the
                                   * TERRET_WIRE_LIMIT_* its cgroup refused */
  TERRET_WIRE_EVENT_PID     = 4,  /* from the process itself, before it runs: the library reads its
                                   * pid from the credentials the kernel attaches (SO_PASSCRED),
                                   * which are in the library's pid namespace when the launcher is
                                   * in another one (a sandbox) */
  TERRET_WIRE_EVENT_STOP_STAGE = 5, /* a: the signal a stop sequence just sent (SIGINT, SIGHUP,
                                     * SIGTERM, SIGKILL; 0 when it began with the library's own
                                     * ^C); b: milliseconds since the stop began */
  TERRET_WIRE_EVENT_SIGNALLED = 6, /* a: a pid the stop signalled (the unit's pid namespace); b:
                                    * the signal; c: 1 for the process itself. The record may go
                                    * on with its command line, NUL-separated: a reader that takes
                                    * only the record loses nothing else (SOCK_SEQPACKET) */
  TERRET_WIRE_EVENT_STOP_DONE = 7, /* after STOP_SPARE: nothing the command started is left; the
                                    * process stays */
  TERRET_WIRE_EVENT_ACCOUNTED = 8, /* after ACCOUNT: every process the unit contains was reported */
  TERRET_WIRE_EVENT_INPUT = 9,     /* after LOOK_INPUT: a: TerretWireInput; b: TERRET_WIRE_INPUT_* */
} TerretWireEventType;

/* The most of a SIGNALLED event's command line that is sent. */
#define TERRET_WIRE_CMDLINE_MAX 240

/* Library to unit. The end of the socket means KILL. */
typedef enum
{
  TERRET_WIRE_CONTROL_KILL         = 1,  /* end everything, then close */
  TERRET_WIRE_CONTROL_SIGNAL_GROUP = 2,  /* a: a signal for the process's group */
  TERRET_WIRE_CONTROL_TERMINAL_MODES = 3, /* a terminal made on a far side back in the modes a
                                           * session needs (terret-launcher-terminal.h); a
                                           * local unit has none, and ignores it */
  TERRET_WIRE_CONTROL_STOP = 4,           /* the stop sequence (terret-launcher-stop.c): a: the
                                           * grace in milliseconds (0: KILL at once); b: the
                                           * first signal for the process's group (0: none, the
                                           * library wrote ^C), with STOP_FOREGROUND the
                                           * milliseconds since the command started; c:
                                           * TERRET_WIRE_STOP_* */
  TERRET_WIRE_CONTROL_STOP_CANCEL = 5,    /* the stop worked: what is left stays (a session's
                                           * shell, back at its prompt) */
  TERRET_WIRE_CONTROL_STOP_SPARE = 6,     /* a command's stop: the process is back (a
                                           * session's shell at its prompt): it stays, and so does
                                           * what started before the command; the rest goes on
                                           * hearing the stop (STOP_DONE when it is gone) */
  TERRET_WIRE_CONTROL_ACCOUNT = 7,        /* a close begins: report every process the unit
                                           * contains as SIGNALLED with signal 0, then ACCOUNTED,
                                           * so that what ends before the stop reaches it (a job
                                           * its terminal's close ended) is named too */
  TERRET_WIRE_CONTROL_LOOK_INPUT = 8,     /* whether the command on a terminal made on a far
                                           * side waits for input there
                                           * (terret-launcher-input.c): INPUT answers; a local
                                           * unit has none, and answers unknown */
} TerretWireControlType;

/* What a look at a terminal's foreground group found. */
typedef enum
{
  TERRET_WIRE_INPUT_UNKNOWN = 0,   /* the state could not be read */
  TERRET_WIRE_INPUT_BUSY = 1,      /* a process runs, or output or input is in flight */
  TERRET_WIRE_INPUT_ELSEWHERE = 2, /* everything sleeps, nothing on the terminal */
  TERRET_WIRE_INPUT_WAITING = 3,   /* something sleeps reading the terminal, nothing runs */
} TerretWireInput;

#define TERRET_WIRE_INPUT_SECRET (1u << 0)  /* the terminal's echo is off */
#define TERRET_WIRE_INPUT_PAGER  (1u << 1)  /* a pager reads the terminal */

/* How a stop goes on after its first signal. */
#define TERRET_WIRE_STOP_CLOSE      (1u << 0)  /* a closing terminal: SIGHUP and SIGCONT to
                                                * everything, then SIGTERM to everything */
#define TERRET_WIRE_STOP_FOREGROUND (1u << 1)  /* a command on a session's terminal (the
                                                * library wrote ^C): SIGTERM to what the command
                                                * started, not to the shell or its earlier jobs,
                                                * which only the sweep ends */

typedef struct
{
  uint32_t type;
  int32_t  a;
  int32_t  b;
  int32_t  c;
} TerretWireRecord;

/* Where starting a process failed, for the message the library gives. */
typedef enum
{
  TERRET_WIRE_STAGE_REQUEST = 1,
  TERRET_WIRE_STAGE_FORK,
  TERRET_WIRE_STAGE_SESSION,
  TERRET_WIRE_STAGE_TERMINAL,
  TERRET_WIRE_STAGE_DESCRIPTORS,
  TERRET_WIRE_STAGE_LIMITS,
  TERRET_WIRE_STAGE_CWD,
  TERRET_WIRE_STAGE_EXEC,
} TerretWireStage;
