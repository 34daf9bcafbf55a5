/* terret-launcher-unit.h: a parsed spawn request, and the unit that carries it out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "terret-launcher-wire.h"


/* One spawn request, parsed. The strings point into the payload. */
typedef struct
{
  char **argv;                  /* NULL-terminated */
  char **envp;                  /* NULL-terminated */
  const char *cwd;              /* or NULL */
  struct { int index; int target; } fds[TERRET_WIRE_MAX_FDS];
  size_t n_fds;
  int terminal;                 /* index of the terminal among the child fds, or -1 */
  /* 0: not limited. */
  uint64_t limit_memory;
  uint64_t limit_processes;
  uint64_t limit_cpu;
  uint64_t limit_file_size;
  uint64_t limit_open_files;
  int stop_grace_ms;            /* the stop the unit runs when the library is gone; 0: KILL */
} Plan;

/* Takes one spawn request off the request socket @sock, its descriptors
 * into @fds (TERRET_WIRE_MAX_FDS of room), their number into @n_fds.
 * Returns 1 for a request, 0 for a malformed one (its descriptors closed
 * and the refusal replied), -1 when the library is gone. */
int  launcher_take_request (int     sock,
                            int    *fds,
                            size_t *n_fds);
/* The reply to a request: @error, or the unit's "pid" (nonzero). */
void launcher_reply        (int     sock,
                            int     error,
                            pid_t   unit);
void launcher_close_fds    (int    *fds,
                            size_t  n);

/* Splits a spawn request's records, @size bytes at @data followed by a
 * NUL, into @plan, whose strings point into @data. A descriptor index
 * must be below @n_child_fds. Returns 0, or an errno (EINVAL for a
 * malformed request); plan->argv and plan->envp are the caller's to free
 * either way. */
int  launcher_parse_plan (char   *data,
                          size_t  size,
                          size_t  n_child_fds,
                          Plan   *plan);

/* Notes which signals the launcher does not leave at their default
 * (ignored, or handled), once its own are set up and before it forks a
 * unit: a unit's process then resets only those before its exec. */
void launcher_note_signals (void);

/* Runs the unit in a child of the launcher: starts @plan's process,
 * reports on @unit_fd, contains everything it starts. Never returns. */
void launcher_unit_main (const Plan *plan,
                         int         unit_fd,
                         const int  *child_fds,
                         size_t      n_child_fds) __attribute__ ((noreturn));

/* SIGKILLs every child of the calling process, again and again as
 * orphans are reparented to it, until none is left; reaps them all.
 * @on_reaped, when not NULL, hears each reaped pid and status. */
void launcher_kill_children (void (*on_reaped) (int pid, int status, void *data),
                             void  *data);

/* Kills every child of the calling process that is not one of @units:
 * orphans reparented to a launcher, whose unit was killed before it could
 * end them. No units: every child. */
void launcher_kill_strays (const pid_t *units,
                           size_t       n_units);

/* How many processes a spared stop watches for their end; with more, the
 * rest are seen to end at the next wake, at the latest the sweep. */
#define UNIT_STOP_WATCH 16

/* A stop sequence in progress (terret-launcher-stop.c). */
typedef struct
{
  int active;
  unsigned flags;               /* TERRET_WIRE_STOP_* */
  int report_fd;                /* where stages are reported, or -1 (the library is gone) */
  int64_t began_ms;             /* CLOCK_MONOTONIC */
  int64_t term_ms;              /* when SIGTERM is due; -1 once sent */
  int64_t kill_ms;              /* when the KILL sweep is due */
  int command_only;             /* a command's stop: the process and what started before
                                 * command_ticks hear none of it, but the sweep */
  unsigned long long command_ticks; /* the command's start, in clock ticks since boot */
  int spare;                    /* the command ended: the process stays, with what is older */
  int watch[UNIT_STOP_WATCH];   /* pidfds of what a spared stop waits for, -1: none */
  int n_watch;
} UnitStop;

/* Readable when one of the processes a spared stop waits for ends: into
 * the unit's poll, so their end is seen when it happens. Returns how
 * many of @pfds it filled. */
int  unit_stop_watch_fds (const UnitStop *stop,
                          struct pollfd  *pfds);

/* Begins the stop of the unit whose process is @process: its first
 * signal now, SIGTERM at half @grace_ms, the sweep at @grace_ms. */
void unit_stop_begin   (UnitStop       *stop,
                        pid_t           process,
                        int             grace_ms,
                        int             first_signal,
                        unsigned        flags,
                        int             report_fd);
/* Milliseconds until the next stage is due (a poll timeout), or -1. */
int  unit_stop_wait_ms (const UnitStop *stop);
/* Carries out the stages that are due, and for a spared stop, sees
 * whether what it waits for is gone. Returns 1 once the KILL sweep is
 * (never for a spared stop, whose end is reported instead). */
int  unit_stop_due     (UnitStop       *stop,
                        pid_t           process);
/* The process came back (a session's bash at its prompt, after ^C): it
 * stays, and so does what was there before its command started; the
 * rest hears SIGTERM now and the sweep at the grace's end. STOP_DONE is
 * reported when nothing of the rest is left, at once where there is none. */
void unit_stop_spare   (UnitStop       *stop,
                        pid_t           process);

/* Reports every process the unit contains (SIGNALLED, signal 0), then
 * ACCOUNTED, on @report_fd. */
void unit_account      (pid_t           process,
                        int             report_fd);

/* `terret-launcher --supervise PROGRAM...` (terret-launcher-supervise.c):
 * runs @argv and contains what it starts, where no library is near. */
int launcher_supervise_main (char **argv);

/* `terret-launcher --serve` (terret-launcher-serve.c): the far side of a
 * bridge, on its standard input and output. */
int launcher_serve_main (char **argv);

/* `terret-launcher --socket FD --bridge ...` (terret-launcher-bridge.c):
 * a launcher for the library whose processes run on a far side. */
int launcher_bridge_main (int    sock,
                          char **argv);

/* What identifies the launcher's build, which a bridge and its far side
 * must share. */
extern const char launcher_build_id[];
