/* terret-stopped-process.c: one process a session's close had to stop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-stopped-process.h"

/**
 * TerretStoppedProcess:
 *
 * One process that [method@Terret.Executor.close_session_full] found
 * still running in the session and had to stop: its pid (on the side
 * where it ran), its command line and the last signal of the stop
 * sequence it heard. A host learns so that its dev server was stopped.
 * A snapshot, never updated.
 *
 * Since: 0.3
 */
struct _TerretStoppedProcess
{
  GObject parent_instance;

  GPid pid;
  char *command;                /* (owned) */
  TerretStopSignal ended_by;
};

G_DEFINE_FINAL_TYPE (TerretStoppedProcess, terret_stopped_process, G_TYPE_OBJECT)

static void
terret_stopped_process_finalize (GObject *object)
{
  TerretStoppedProcess *self = TERRET_STOPPED_PROCESS (object);

  g_clear_pointer (&self->command, g_free);

  G_OBJECT_CLASS (terret_stopped_process_parent_class)->finalize (object);
}

static void
terret_stopped_process_class_init (TerretStoppedProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = terret_stopped_process_finalize;
}

static void
terret_stopped_process_init (TerretStoppedProcess *self)
{
}

/**
 * terret_stopped_process_new:
 * @pid: its pid, where it ran
 * @command: its command line, arguments separated by spaces (may be empty
 *   where it was not known)
 * @ended_by: the last signal of the stop sequence it heard
 *
 * For backends: one entry of a close's account.
 *
 * Returns: (transfer full): a new entry
 *
 * Since: 0.3
 */
TerretStoppedProcess *
terret_stopped_process_new (GPid              pid,
                            const char       *command,
                            TerretStopSignal  ended_by)
{
  TerretStoppedProcess *self;

  g_return_val_if_fail (command != NULL, NULL);

  self = g_object_new (TERRET_TYPE_STOPPED_PROCESS, NULL);
  self->pid = pid;
  self->command = g_strdup (command);
  self->ended_by = ended_by;
  return self;
}

/**
 * terret_stopped_process_get_pid:
 * @self: an entry
 *
 * Gets the process's pid, in the PID namespace where it ran (a far
 * side's, for ssh and the containers).
 *
 * Returns: the pid
 *
 * Since: 0.3
 */
GPid
terret_stopped_process_get_pid (TerretStoppedProcess *self)
{
  g_return_val_if_fail (TERRET_IS_STOPPED_PROCESS (self), 0);

  return self->pid;
}

/**
 * terret_stopped_process_get_command:
 * @self: an entry
 *
 * Gets the process's command line, its arguments separated by spaces,
 * cut at a bound; empty where it was not known.
 *
 * Returns: the command line
 *
 * Since: 0.3
 */
const char *
terret_stopped_process_get_command (TerretStoppedProcess *self)
{
  g_return_val_if_fail (TERRET_IS_STOPPED_PROCESS (self), NULL);

  return self->command;
}

/**
 * terret_stopped_process_get_ended_by:
 * @self: an entry
 *
 * Gets the last signal of the stop sequence the process heard: a
 * closing terminal's %TERRET_STOP_SIGNAL_HANGUP when that ended it,
 * %TERRET_STOP_SIGNAL_TERMINATE, or %TERRET_STOP_SIGNAL_KILL at the
 * grace's end.
 *
 * Returns: the signal
 *
 * Since: 0.3
 */
TerretStopSignal
terret_stopped_process_get_ended_by (TerretStoppedProcess *self)
{
  g_return_val_if_fail (TERRET_IS_STOPPED_PROCESS (self), TERRET_STOP_SIGNAL_NONE);

  return self->ended_by;
}
