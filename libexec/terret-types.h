/* terret-types.h: enumerations shared by the whole API
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

/**
 * TerretStream:
 * @TERRET_STREAM_STDOUT: the command's standard output; for a backend
 *   that runs commands on a terminal, everything the terminal carried
 * @TERRET_STREAM_STDERR: the command's standard error, for backends with
 *   %TERRET_CAPABILITY_SEPARATE_STDERR
 *
 * Which output stream some bytes came from.
 *
 * Since: 0.1
 */
typedef enum {
  TERRET_STREAM_STDOUT,
  TERRET_STREAM_STDERR,
} TerretStream;

/**
 * TerretCapabilities:
 * @TERRET_CAPABILITY_NONE: nothing beyond the interface itself
 * @TERRET_CAPABILITY_RUNS_COMMANDS: commands actually run (every backend
 *   but noshell)
 * @TERRET_CAPABILITY_PERSISTENT_SESSIONS: one shell serves every run of a
 *   session key, so `cd` and `export` persist from one run to the next
 * @TERRET_CAPABILITY_SEPARATE_STDERR: stderr is captured apart from stdout;
 *   without it [method@Terret.Result.get_stderr] is %NULL
 * @TERRET_CAPABILITY_REQUEST_CWD: a request's cwd is honoured
 * @TERRET_CAPABILITY_REQUEST_ENV: a request's environment overlay is honoured
 * @TERRET_CAPABILITY_PROGRESS: output reaches the request's progress
 *   callback while the command runs
 * @TERRET_CAPABILITY_REPORTS_CWD: results carry the session's cwd after the run
 * @TERRET_CAPABILITY_SESSION_PID: [method@Terret.Executor.get_session_pid]
 *   names a local process
 * @TERRET_CAPABILITY_INPUT: [method@Terret.Executor.send_input] writes to
 *   the standard input of the command running in a session
 * @TERRET_CAPABILITY_INTERRUPT: [method@Terret.Executor.interrupt] stops the
 *   command running in a session, as ^C at a terminal, and kills it when
 *   the interrupt is ignored
 * @TERRET_CAPABILITY_POLL: [method@Terret.Executor.poll_async] returns the
 *   new output of a command left running by a detaching timeout, and its
 *   status once it ended
 * @TERRET_CAPABILITY_DETACH: a request's timeout action may be
 *   %TERRET_TIMEOUT_ACTION_DETACH: at the timeout the run returns and the
 *   command goes on
 * @TERRET_CAPABILITY_CLOCKS: a request may carry a deadline and an idle
 *   timeout (since 0.2)
 * @TERRET_CAPABILITY_LIST: [method@Terret.Executor.list_async] lists the
 *   sessions and the commands left running (since 0.2)
 *
 * What a backend offers. A host (and the conformance checks) decides what
 * to rely on from these flags, never from a backend's name.
 *
 * Since: 0.1
 */
typedef enum /*< flags >*/ {
  TERRET_CAPABILITY_NONE                = 0,
  TERRET_CAPABILITY_RUNS_COMMANDS       = 1 << 0,
  TERRET_CAPABILITY_PERSISTENT_SESSIONS = 1 << 1,
  TERRET_CAPABILITY_SEPARATE_STDERR     = 1 << 2,
  TERRET_CAPABILITY_REQUEST_CWD         = 1 << 3,
  TERRET_CAPABILITY_REQUEST_ENV         = 1 << 4,
  TERRET_CAPABILITY_PROGRESS            = 1 << 5,
  TERRET_CAPABILITY_REPORTS_CWD         = 1 << 6,
  TERRET_CAPABILITY_SESSION_PID         = 1 << 7,
  TERRET_CAPABILITY_INPUT               = 1 << 8,
  TERRET_CAPABILITY_INTERRUPT           = 1 << 9,
  TERRET_CAPABILITY_POLL                = 1 << 10,
  TERRET_CAPABILITY_DETACH              = 1 << 11,
  TERRET_CAPABILITY_CLOCKS              = 1 << 12,
  TERRET_CAPABILITY_LIST                = 1 << 13,
} TerretCapabilities;

/**
 * TerretTimeoutAction:
 * @TERRET_TIMEOUT_ACTION_KILL: the command is interrupted and killed with
 *   everything it started; the result has no status
 * @TERRET_TIMEOUT_ACTION_DETACH: the run returns the output so far with
 *   [method@Terret.Result.get_running] %TRUE and the command goes on in its
 *   session, which refuses new runs (%TERRET_EXEC_ERROR_BUSY) until it
 *   ends. [method@Terret.Executor.poll_async] collects its further output
 *   and final status; [method@Terret.Executor.send_input] and
 *   [method@Terret.Executor.interrupt] reach it. Needs
 *   %TERRET_CAPABILITY_DETACH.
 *
 * What happens to a command still running when its request's timeout
 * passes.
 *
 * Since: 0.1
 */
typedef enum {
  TERRET_TIMEOUT_ACTION_KILL,
  TERRET_TIMEOUT_ACTION_DETACH,
} TerretTimeoutAction;

/**
 * TerretEngineMode:
 * @TERRET_ENGINE_MODE_SESSION: one persistent bash per session key, as
 *   [class@Terret.SessionExecutor]
 * @TERRET_ENGINE_MODE_ONESHOT: one process per command, as
 *   [class@Terret.CommandExecutor]
 *
 * How a [class@Terret.Engine] runs commands.
 *
 * Since: 0.3
 */
typedef enum {
  TERRET_ENGINE_MODE_SESSION,
  TERRET_ENGINE_MODE_ONESHOT,
} TerretEngineMode;

/**
 * TerretLimits:
 * @TERRET_LIMIT_NONE: no limit
 * @TERRET_LIMIT_MEMORY: memory, in bytes, of everything a session or run
 *   contains (a cgroup where one can be made; else each process's
 *   address space)
 * @TERRET_LIMIT_PROCESSES: processes at once (a cgroup where one can be
 *   made; else the user's processes, which does not hold for root)
 * @TERRET_LIMIT_CPU: CPU time of each process, in seconds (SIGXCPU, then
 *   SIGKILL a second later)
 * @TERRET_LIMIT_FILE_SIZE: the size, in bytes, a process may write a file
 *   to (SIGXFSZ)
 * @TERRET_LIMIT_OPEN_FILES: descriptors open in each process
 *
 * Resource limits a process starts with ([method@Terret.Launcher.set_limit]),
 * and those a command ran into ([method@Terret.Result.get_limits_hit]).
 *
 * Since: 0.2
 */
typedef enum /*< flags >*/ {
  TERRET_LIMIT_NONE       = 0,
  TERRET_LIMIT_MEMORY     = 1 << 0,
  TERRET_LIMIT_PROCESSES  = 1 << 1,
  TERRET_LIMIT_CPU        = 1 << 2,
  TERRET_LIMIT_FILE_SIZE  = 1 << 3,
  TERRET_LIMIT_OPEN_FILES = 1 << 4,
} TerretLimits;

/**
 * TerretCaptureMode:
 * @TERRET_CAPTURE_MODE_DEFAULT: what the executor's `capture` setting
 *   says; as a setting, the backend's own default (pty and ssh keep the
 *   head, oneshot the tail)
 * @TERRET_CAPTURE_MODE_HEAD: keep the first `max-output` bytes; the
 *   omitted bytes come after all of the kept ones
 * @TERRET_CAPTURE_MODE_TAIL: keep the last `max-output` bytes, starting on
 *   a line where a line end lies near the cut; the omitted bytes come
 *   before all of the kept ones
 * @TERRET_CAPTURE_MODE_HEAD_TAIL: keep the first and the last halves of
 *   `max-output`, each cut at a line boundary where a line end lies near
 *   the cut; the omitted bytes lie between them, at
 *   [method@Terret.Result.get_omitted_at]
 *
 * Which bytes of a stream a run keeps once its output passes
 * `max-output`. Whatever the mode, a cut never splits a UTF-8 character
 * and memory stays bounded by `max-output` plus a small constant.
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_CAPTURE_MODE_DEFAULT,
  TERRET_CAPTURE_MODE_HEAD,
  TERRET_CAPTURE_MODE_TAIL,
  TERRET_CAPTURE_MODE_HEAD_TAIL,
} TerretCaptureMode;

/**
 * TerretSandbox:
 * @TERRET_SANDBOX_NONE: commands run with the host's authority
 * @TERRET_SANDBOX_READ_ONLY: the whole filesystem read-only, a private
 *   `/tmp`, a PID namespace of its own
 * @TERRET_SANDBOX_WORKSPACE_WRITE: as read-only, with the `workspace`
 *   directory and the `writable` paths read-write
 *
 * The filesystem policy of the `sandbox` setting, held by bubblewrap.
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_SANDBOX_NONE,
  TERRET_SANDBOX_READ_ONLY,
  TERRET_SANDBOX_WORKSPACE_WRITE,
} TerretSandbox;

/**
 * TerretNetwork:
 * @TERRET_NETWORK_DEFAULT: off under a sandbox, on without one
 * @TERRET_NETWORK_ON: the host's network
 * @TERRET_NETWORK_OFF: a network namespace with loopback only
 *
 * The `network` setting.
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_NETWORK_DEFAULT,
  TERRET_NETWORK_ON,
  TERRET_NETWORK_OFF,
} TerretNetwork;

/**
 * TerretEnvPolicy:
 * @TERRET_ENV_POLICY_INHERIT: the host's whole environment
 * @TERRET_ENV_POLICY_CORE: only PATH, HOME, USER, LOGNAME, SHELL, LANG,
 *   LC_*, TERM, TMPDIR and TZ of the host's
 * @TERRET_ENV_POLICY_NONE: nothing of the host's
 *
 * What of the host's environment a shell starts with (the `env-policy`
 * setting), before `env-exclude` drops and `env` adds.
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_ENV_POLICY_INHERIT,
  TERRET_ENV_POLICY_CORE,
  TERRET_ENV_POLICY_NONE,
} TerretEnvPolicy;

/**
 * TerretSessionState:
 * @TERRET_SESSION_STATE_IDLE: a session whose shell waits for a command
 * @TERRET_SESSION_STATE_RUNNING: a command runs, and its run waits for it
 * @TERRET_SESSION_STATE_DETACHED: a command was handed back still running
 *   (a detaching timeout, return-after, an idle return): poll, input,
 *   interrupt and close reach it
 * @TERRET_SESSION_STATE_ENDED: a command that was handed back has ended;
 *   its end waits for the next poll
 *
 * What runs in a session; see [class@Terret.SessionInfo].
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_SESSION_STATE_IDLE,
  TERRET_SESSION_STATE_RUNNING,
  TERRET_SESSION_STATE_DETACHED,
  TERRET_SESSION_STATE_ENDED,
} TerretSessionState;

/**
 * TerretClock:
 * @TERRET_CLOCK_NONE: no clock: the command ended on its own, or was
 *   stopped (interrupt, close, cancel)
 * @TERRET_CLOCK_TIMEOUT: the timeout ended it (`on_timeout` kill)
 * @TERRET_CLOCK_RETURN_AFTER: handed back still running after its
 *   `return_after` (or a timeout with `on_timeout` detach)
 * @TERRET_CLOCK_DEADLINE: its deadline ended it and everything it started,
 *   detached or not
 * @TERRET_CLOCK_IDLE: it printed nothing for its idle timeout: ended, or
 *   handed back still running (`on_idle` return; the result is then
 *   [method@Terret.Result.get_stalled])
 * @TERRET_CLOCK_INPUT: it waited for input on its terminal: handed back
 *   still running (a detaching request, or the `on-input` setting's
 *   %TERRET_INPUT_ACTION_REPORT), or ended (%TERRET_INPUT_ACTION_FAIL);
 *   since 0.3
 *
 * Which of a request's clocks ended a command or handed it back; see
 * [method@Terret.Result.get_clock].
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_CLOCK_NONE,
  TERRET_CLOCK_TIMEOUT,
  TERRET_CLOCK_RETURN_AFTER,
  TERRET_CLOCK_DEADLINE,
  TERRET_CLOCK_IDLE,
  TERRET_CLOCK_INPUT,
} TerretClock;

/**
 * TerretStopSignal:
 * @TERRET_STOP_SIGNAL_NONE: nothing stopped the command: it ended on its own
 * @TERRET_STOP_SIGNAL_INTERRUPT: it ended after the interrupt (^C on its
 *   terminal, or SIGINT to its process group), the stop's first step
 * @TERRET_STOP_SIGNAL_HANGUP: it ended after SIGHUP, the first step of a
 *   session's close
 * @TERRET_STOP_SIGNAL_TERMINATE: it ended after SIGTERM, sent halfway
 *   through the grace
 * @TERRET_STOP_SIGNAL_KILL: it was still running at the grace's end and
 *   was killed (SIGKILL) with everything it started
 *
 * The last signal of the stop sequence a command heard before it ended;
 * see [method@Terret.Result.get_ended_by] and
 * [property@Terret.Request:stop-grace].
 *
 * Since: 0.3
 */
typedef enum {
  TERRET_STOP_SIGNAL_NONE,
  TERRET_STOP_SIGNAL_INTERRUPT,
  TERRET_STOP_SIGNAL_HANGUP,
  TERRET_STOP_SIGNAL_TERMINATE,
  TERRET_STOP_SIGNAL_KILL,
} TerretStopSignal;

/**
 * TerretIdleAction:
 * @TERRET_IDLE_ACTION_KILL: end the command and everything it started
 * @TERRET_IDLE_ACTION_RETURN: hand back the output so far, marked stalled,
 *   and leave the command running (as a detach: poll, input and interrupt
 *   reach it)
 *
 * What a request's idle timeout does to a command that printed nothing
 * for that long.
 *
 * Since: 0.2
 */
typedef enum {
  TERRET_IDLE_ACTION_KILL,
  TERRET_IDLE_ACTION_RETURN,
} TerretIdleAction;

/**
 * TerretInputState:
 * @TERRET_INPUT_STATE_UNKNOWN: could not be read: the command has no
 *   terminal (oneshot), or the kernel state of the side that runs it
 *   cannot be read from here
 * @TERRET_INPUT_STATE_NOT_WAITING: the command does not wait for input
 *   (it runs, sleeps, or waits on anything but its terminal)
 * @TERRET_INPUT_STATE_WAITING: every process of the terminal's foreground
 *   group sleeps reading the terminal: the command waits for input
 *
 * Whether a command left running waits for input on its terminal; see
 * [method@Terret.Result.get_input_state] and
 * [Interactive commands](interactive.html).
 *
 * Since: 0.3
 */
typedef enum {
  TERRET_INPUT_STATE_UNKNOWN,
  TERRET_INPUT_STATE_NOT_WAITING,
  TERRET_INPUT_STATE_WAITING,
} TerretInputState;

/**
 * TerretInputAction:
 * @TERRET_INPUT_ACTION_REPORT: hand the command back at once, still
 *   running, with its prompt, as a detaching timeout does: input, poll,
 *   interrupt and close reach it
 * @TERRET_INPUT_ACTION_EOF: type an end of file for it (^D at the start of
 *   a line), as to a command whose input is closed; after the third in
 *   one run, hand it back as %TERRET_INPUT_ACTION_REPORT does
 * @TERRET_INPUT_ACTION_FAIL: stop it, and its session, as a timeout does;
 *   the result's notice carries the prompt
 * @TERRET_INPUT_ACTION_WAIT: go on waiting for it, as before 0.3: for a
 *   host that answers from another call, told by the request's
 *   [signal@Terret.Request::waiting-for-input]; the timeout still ends it
 *
 * What a run whose request does not detach does when its command waits
 * for input on its terminal (the `on-input` setting). A request that
 * detaches (a return-after, a timeout that detaches) is always handed
 * back as %TERRET_INPUT_ACTION_REPORT says.
 *
 * Since: 0.3
 */
typedef enum {
  TERRET_INPUT_ACTION_REPORT,
  TERRET_INPUT_ACTION_EOF,
  TERRET_INPUT_ACTION_FAIL,
  TERRET_INPUT_ACTION_WAIT,
} TerretInputAction;

G_END_DECLS
