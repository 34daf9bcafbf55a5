#!/usr/bin/python3
# async-sessions.py: several sessions at once on one executor and one main loop
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: async-sessions.py [BACKEND]
#
# The same as async-sessions.c, with PyGObject: three sessions print a few
# lines each, slowly, and their output is printed as it arrives through
# each request's progress callback; a fourth, long run is cancelled with a
# Gio.Cancellable once the three have finished.
#
# Exits 0 when every run behaved as expected, 77 (skipped) on a backend
# that runs no commands, 1 otherwise.

import sys

import gi
gi.require_version('Terret', '1')
from gi.repository import Gio, GLib, Terret  # noqa: E402

N_SESSIONS = 3
LINES = 'for i in 1 2 3; do echo "$KEY line $i"; sleep 0.1; done'


class App:
    def __init__(self, executor):
        self.executor = executor
        self.caps = executor.get_capabilities()
        self.loop = GLib.MainLoop()
        self.cancellable = Gio.Cancellable()
        self.pending = 0
        self.finished = 0
        self.ok = True

    def fail(self, key, what):
        print(f'[{key}] unexpected: {what}', file=sys.stderr)
        self.ok = False

    def start(self, key, command, expected, timeout):
        heard = bytearray()

        # Called on this thread's main context whenever output arrives:
        # whole lines or chunks, depending on the backend.
        def on_progress(request, stream, data):
            chunk = data.get_data()
            heard.extend(chunk)
            name = 'stderr' if stream == Terret.Stream.STDERR else 'stdout'
            text = chunk.decode('utf-8', errors='replace')
            print(f'[{key} {name}] {text}', end='' if text.endswith('\n') else '\n', flush=True)

        def on_done(executor, res):
            try:
                result = executor.run_finish(res)
            except GLib.Error as e:
                if e.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED):
                    print(f'[{key}] cancelled, as asked: {e.message}')
                    if expected is not None:
                        self.fail(key, 'a run that was not cancelled reported a cancellation')
                else:
                    self.fail(key, f'{e.domain} {e.code}: {e.message}')
            else:
                self.check(key, expected, bytes(heard), result)

            # Once the others are done, stop the long one.
            if expected is not None:
                self.finished += 1
                if self.finished == N_SESSIONS:
                    print('cancelling the long run')
                    self.cancellable.cancel()

            self.pending -= 1
            if self.pending == 0:
                self.loop.quit()

        request = Terret.Request.new(command)
        # Each key is its own session: runs on different keys go on at once.
        request.set_session(key)
        request.set_timeout(timeout)
        request.set_progress_func(on_progress)

        self.pending += 1
        self.executor.run_async(request, self.cancellable if expected is None else None, on_done)

    def check(self, key, expected, heard, result):
        out = result.get_stdout().get_data()
        notice = result.get_notice()
        print(f'[{key}] finished: status {result.get_exit_status()}'
              + (f', notice: {notice}' if notice else ''))

        if expected is None:
            self.fail(key, 'the run was not cancelled')
        elif not result.get_exited() or result.get_exit_status() != 0:
            self.fail(key, 'the command did not exit with status 0')
        elif out != expected:
            self.fail(key, f'the output is not what the command printed: {out!r}')
        elif self.caps & Terret.Capabilities.PROGRESS and heard != out:
            self.fail(key, f'the progress callback did not see the whole output: {heard!r}')


def main(argv):
    if len(argv) > 2:
        print(f'usage: {argv[0]} [BACKEND]', file=sys.stderr)
        return 2

    try:
        executor = Terret.Executor.new(argv[1]) if len(argv) > 1 else Terret.Executor.new_default()
    except GLib.Error as e:
        print(f'no executor: {e.message}', file=sys.stderr)
        return 1

    print(f'backend: {executor.get_name()}')
    if not executor.get_capabilities() & Terret.Capabilities.RUNS_COMMANDS:
        print(f'the {executor.get_name()} backend runs no commands; nothing to show')
        return 77

    app = App(executor)
    for i in range(1, N_SESSIONS + 1):
        key = f'session-{i}'
        expected = ''.join(f'{key} line {n}\n' for n in (1, 2, 3)).encode()
        app.start(key, f'KEY={key}; {LINES}', expected, 60)
    app.start('long', 'echo started; sleep 60', None, 120)

    app.loop.run()

    # Nothing is left running: closing is what disposal does anyway.
    executor.close_all()

    print('all runs behaved as expected' if app.ok else 'some runs did not behave as expected')
    return 0 if app.ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
