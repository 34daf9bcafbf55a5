#!/usr/bin/python3
# test_terret.py: the library through GObject Introspection, as Python sees it
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs under `meson test` against the uninstalled typelib (GI_TYPELIB_PATH,
# LD_LIBRARY_PATH and TERRET_EXEC_MODULE_PATH come from meson) and prints
# TAP. Every call goes through PyGObject, so a missing or wrong annotation
# shows up here as a wrong type, a leak or a crash.

import os
import sys
import unittest

import gi
gi.require_version('Terret', '1')
from gi.repository import Gio, GLib, Terret  # noqa: E402

# A run that never completes must fail its test, not hang the suite.
LOOP_GUARD_SECONDS = 60


def backend_names():
    return [info.get_name() for info in Terret.BackendInfo.list()]


def run_async_and_wait(executor, request, cancellable=None):
    """Runs request with run_async on a GLib.MainLoop; returns (result, error)."""
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, res):
        try:
            outcome['result'] = source.run_finish(res)
        except GLib.Error as e:
            outcome['error'] = e
        loop.quit()

    executor.run_async(request, cancellable, done)
    run_loop(loop)
    return outcome.get('result'), outcome.get('error')


def run_loop(loop):
    fired = []

    def guard():
        fired.append(True)
        loop.quit()
        return GLib.SOURCE_REMOVE

    guard_id = GLib.timeout_add_seconds(LOOP_GUARD_SECONDS, guard)
    loop.run()
    if fired:
        raise AssertionError('the main loop was still waiting after %d s' % LOOP_GUARD_SECONDS)
    GLib.source_remove(guard_id)


class TerretTestCase(unittest.TestCase):
    def assertExecError(self, error, code):
        self.assertIsInstance(error, GLib.Error)
        self.assertEqual(error.domain, GLib.quark_to_string(Terret.exec_error_quark()))
        self.assertTrue(error.matches(Terret.exec_error_quark(), code),
                        '%s %d (%s) is not %s' % (error.domain, error.code, error.message, code))

    def assertCancelled(self, error):
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED),
                        '%s %d (%s) is not a cancellation' % (error.domain, error.code, error.message))


class TestSelection(TerretTestCase):
    def test_unknown_backend(self):
        with self.assertRaises(GLib.Error) as cm:
            Terret.Executor.new('no-such-backend')
        self.assertExecError(cm.exception, Terret.ExecError.UNKNOWN_BACKEND)
        # The message lists the backends that do exist.
        self.assertIn('no-such-backend', cm.exception.message)
        self.assertIn('noshell', cm.exception.message)

    def test_backend_info(self):
        names = backend_names()
        self.assertIn('noshell', names)
        priorities = [info.get_priority() for info in Terret.BackendInfo.list()]
        self.assertEqual(priorities, sorted(priorities, reverse=True))

    def test_invalid_config(self):
        executor = Terret.Executor.new('noshell')
        with self.assertRaises(GLib.Error) as cm:
            executor.set_setting('no-such-setting', '1')
        self.assertExecError(cm.exception, Terret.ExecError.INVALID_CONFIG)
        self.assertIn('no-such-setting', cm.exception.message)

    def test_noshell(self):
        executor = Terret.Executor.new('noshell')
        self.assertEqual(executor.get_name(), 'noshell')
        self.assertEqual(executor.get_capabilities(), Terret.Capabilities.NONE)
        with self.assertRaises(GLib.Error) as cm:
            executor.run(Terret.Request.new('echo never'), None)
        self.assertExecError(cm.exception, Terret.ExecError.NO_SHELL)

        result, error = run_async_and_wait(executor, Terret.Request.new('echo never'))
        self.assertIsNone(result)
        self.assertExecError(error, Terret.ExecError.NO_SHELL)

    def test_not_supported(self):
        executor = Terret.Executor.new('noshell')
        request = Terret.Request.new('true')
        request.set_cwd('/')
        with self.assertRaises(GLib.Error) as cm:
            executor.run(request, None)
        self.assertExecError(cm.exception, Terret.ExecError.NOT_SUPPORTED)


class BackendTests:
    """What every command-running backend must do, seen from Python."""

    backend = None

    def setUp(self):
        if self.backend not in backend_names():
            self.skipTest('the %s backend module is not built' % self.backend)
        self.executor = Terret.Executor.new(self.backend)

    def tearDown(self):
        self.executor.close_all()
        del self.executor

    def run_command(self, command, session=None, timeout=0):
        request = Terret.Request.new(command)
        if session is not None:
            request.set_session(session)
        request.set_timeout(timeout)
        return self.executor.run(request, None)

    def test_status_and_output(self):
        # `(exit 3)`: a plain `exit` would end a persistent session's shell.
        result = self.run_command('printf "a\\xff\\n"; (exit 3)')
        self.assertTrue(result.get_exited())
        self.assertEqual(result.get_exit_status(), 3)
        self.assertEqual(result.get_term_signal(), 0)
        # Bytes, exactly: not decoded, not re-encoded.
        self.assertIsInstance(result.get_stdout(), GLib.Bytes)
        self.assertEqual(result.get_stdout().get_data(), b'a\xff\n')
        self.assertIsNone(result.get_notice())
        self.assertFalse(result.get_timed_out())
        self.assertEqual(result.get_dropped(Terret.Stream.STDOUT), 0)

    def test_no_newline_invented(self):
        result = self.run_command('printf "no newline"')
        self.assertEqual(result.get_stdout().get_data(), b'no newline')

    def test_timeout(self):
        result = self.run_command('echo partial; sleep 30', timeout=0.5)
        self.assertTrue(result.get_timed_out())
        self.assertFalse(result.get_exited())
        self.assertEqual(result.get_exit_status(), -1)
        self.assertEqual(result.get_stdout().get_data(), b'partial\n')
        self.assertIsNotNone(result.get_notice())

    def test_dropped(self):
        self.executor.set_setting('max-output', '100')
        result = self.run_command('seq 1 3000')
        self.assertEqual(result.get_exit_status(), 0)
        kept = result.get_stdout().get_data()
        dropped = result.get_dropped(Terret.Stream.STDOUT)
        self.assertGreater(dropped, 0)
        # A tail may keep its eviction slack too (a quarter of max-output,
        # at least 4 KiB), depending on how the output arrived in reads.
        self.assertLessEqual(len(kept), 100 + 4096)
        # Kept plus dropped is everything `seq 1 3000` printed.
        self.assertEqual(len(kept) + dropped, len(''.join('%d\n' % i for i in range(1, 3001))))
        self.assertIsNotNone(result.get_notice())

    def test_invalid_setting_value(self):
        with self.assertRaises(GLib.Error) as cm:
            self.executor.set_setting('timeout', 'soon')
        self.assertExecError(cm.exception, Terret.ExecError.INVALID_CONFIG)
        self.assertIn('timeout', cm.exception.message)
        with self.assertRaises(GLib.Error) as cm:
            self.executor.set_setting('max-output', '-1')
        self.assertExecError(cm.exception, Terret.ExecError.INVALID_CONFIG)

    def test_setting_as_property(self):
        self.executor.props.timeout = 42.5
        self.assertEqual(self.executor.props.timeout, 42.5)
        self.executor.set_setting('timeout', '7')
        self.assertEqual(self.executor.props.timeout, 7.0)

    def test_list_and_clocks(self):
        # A command handed back by return-after is listed, with its start as
        # a GLib.DateTime; its deadline ends it.
        request = Terret.Request.new('echo up; sleep 30')
        request.set_session('listed')
        request.set_return_after(0.3)
        request.set_deadline(1)
        result = self.executor.run(request, None)
        self.assertTrue(result.get_running())
        self.assertEqual(result.get_clock(), Terret.Clock.RETURN_AFTER)
        infos = self.executor.list(None)
        listed = [info for info in infos if info.get_key() == 'listed']
        self.assertEqual(len(listed), 1)
        self.assertEqual(listed[0].get_state(), Terret.SessionState.DETACHED)
        self.assertEqual(listed[0].get_command(), 'echo up; sleep 30')
        self.assertIsInstance(listed[0].get_started(), GLib.DateTime)
        while True:
            result = self.executor.poll('listed', 30, None)
            if not result.get_running():
                break
        self.assertEqual(result.get_clock(), Terret.Clock.DEADLINE)

    def test_progress(self):
        heard = []
        request = Terret.Request.new('echo one; sleep 0.1; echo two')
        request.set_progress_func(lambda req, stream, data: heard.append((stream, data.get_data())))
        result, error = run_async_and_wait(self.executor, request)
        self.assertIsNone(error)
        self.assertEqual(result.get_exit_status(), 0)
        out = b''.join(data for stream, data in heard if stream == Terret.Stream.STDOUT)
        self.assertEqual(out, result.get_stdout().get_data())
        self.assertEqual(out, b'one\ntwo\n')

    def test_async_sessions_at_once(self):
        loop = GLib.MainLoop()
        results = {}

        def done(source, res, key):
            try:
                results[key] = source.run_finish(res)
            except GLib.Error as e:
                results[key] = e
            if len(results) == 4:
                loop.quit()

        for i in range(4):
            key = 'concurrent-%d' % i
            request = Terret.Request.new('sleep 0.2; echo %s' % key)
            request.set_session(key)
            self.executor.run_async(request, None, done, key)
        run_loop(loop)

        for key, result in results.items():
            self.assertIsInstance(result, Terret.Result, '%s: %s' % (key, result))
            self.assertEqual(result.get_exit_status(), 0)
            self.assertEqual(result.get_stdout().get_data(), (key + '\n').encode())

    def test_cancel_running(self):
        cancellable = Gio.Cancellable()
        request = Terret.Request.new('echo started; sleep 30')

        # Cancelled once the command is known to run.
        def on_progress(req, stream, data):
            if b'started' in data.get_data():
                cancellable.cancel()
        request.set_progress_func(on_progress)

        result, error = run_async_and_wait(self.executor, request, cancellable)
        self.assertIsNone(result)
        self.assertCancelled(error)

        # The executor is still usable afterwards.
        result = self.run_command('echo after')
        self.assertEqual(result.get_stdout().get_data(), b'after\n')

    def test_cancel_before_start(self):
        cancellable = Gio.Cancellable()
        cancellable.cancel()
        with self.assertRaises(GLib.Error) as cm:
            self.executor.run(Terret.Request.new('echo never'), cancellable)
        self.assertCancelled(cm.exception)


class TestOneshot(BackendTests, TerretTestCase):
    backend = 'oneshot'

    def test_separate_stderr(self):
        self.assertTrue(self.executor.get_capabilities() & Terret.Capabilities.SEPARATE_STDERR)
        result = self.run_command('echo out; echo err >&2')
        self.assertEqual(result.get_stdout().get_data(), b'out\n')
        self.assertEqual(result.get_stderr().get_data(), b'err\n')
        self.assertIsNone(result.get_cwd())

    def test_request_cwd_and_env(self):
        request = Terret.Request.new('pwd; echo "$TERRET_PY_TEST"')
        request.set_cwd('/')
        request.setenv('TERRET_PY_TEST', 'from python')
        self.assertEqual(list(request.get_env()), ['TERRET_PY_TEST=from python'])
        result = self.executor.run(request, None)
        self.assertEqual(result.get_stdout().get_data(), b'/\nfrom python\n')

    def test_invalid_request(self):
        request = Terret.Request.new('true')
        request.set_cwd('/nonexistent/directory')
        with self.assertRaises(GLib.Error) as cm:
            self.executor.run(request, None)
        self.assertExecError(cm.exception, Terret.ExecError.INVALID_REQUEST)

    def test_signal(self):
        result = self.run_command('kill -9 $$')
        self.assertFalse(result.get_exited())
        self.assertEqual(result.get_term_signal(), 9)


class TestPty(BackendTests, TerretTestCase):
    backend = 'pty'

    def test_pipestatus(self):
        # An int array, annotated for introspection: bash's PIPESTATUS.
        result = self.run_command('false | (exit 3) | true')
        self.assertEqual(result.get_exit_status(), 0)
        self.assertEqual(result.get_pipestatus(), [1, 3, 0])

    def test_merged_stderr(self):
        self.assertFalse(self.executor.get_capabilities() & Terret.Capabilities.SEPARATE_STDERR)
        result = self.run_command('echo out; echo err >&2')
        self.assertEqual(result.get_stdout().get_data(), b'out\nerr\n')
        self.assertIsNone(result.get_stderr())

    def test_persistent_session(self):
        self.assertTrue(self.executor.get_capabilities() & Terret.Capabilities.PERSISTENT_SESSIONS)
        self.run_command('cd / && export TERRET_PY_TEST=kept', session='persist')
        result = self.run_command('pwd; echo "$TERRET_PY_TEST"', session='persist')
        self.assertEqual(result.get_stdout().get_data(), b'/\nkept\n')
        self.assertEqual(result.get_cwd(), '/')
        self.assertGreater(self.executor.get_session_pid('persist'), 0)
        self.executor.close_session('persist')
        self.assertEqual(self.executor.get_session_pid('persist'), 0)

    def test_busy(self):
        loop = GLib.MainLoop()
        outcome = {}

        def first_done(source, res):
            try:
                outcome['first'] = source.run_finish(res)
            except GLib.Error as e:
                outcome['first'] = e
            if 'second' in outcome:
                loop.quit()

        def second_done(source, res):
            try:
                outcome['second'] = source.run_finish(res)
            except GLib.Error as e:
                outcome['second'] = e
            if 'first' in outcome:
                loop.quit()

        first = Terret.Request.new('sleep 0.5; echo first')
        first.set_session('busy')
        second = Terret.Request.new('echo second')
        second.set_session('busy')
        self.executor.run_async(first, None, first_done)
        self.executor.run_async(second, None, second_done)
        run_loop(loop)

        # Refused, not queued; the running command is unaffected.
        self.assertExecError(outcome['second'], Terret.ExecError.BUSY)
        self.assertIsInstance(outcome['first'], Terret.Result)
        self.assertEqual(outcome['first'].get_exit_status(), 0)
        self.assertEqual(outcome['first'].get_stdout().get_data(), b'first\n')

    def test_request_cwd(self):
        # The command runs there; the session's own cwd is back after it.
        before = self.run_command('pwd').get_stdout().get_data()
        request = Terret.Request.new('pwd; cd /tmp')
        request.set_cwd('/')
        result = self.executor.run(request, None)
        self.assertEqual(result.get_stdout().get_data(), b'/\n')
        self.assertEqual(self.run_command('pwd').get_stdout().get_data(), before)


class TapResult(unittest.TestResult):
    """Prints one TAP line per test, so meson reports each test by name."""

    def __init__(self):
        super().__init__()
        self.number = 0

    def _line(self, ok, test, directive=''):
        self.number += 1
        print('%s %d - %s%s' % ('ok' if ok else 'not ok', self.number, test.id(), directive),
              flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def _diagnose(self, test, err):
        for line in self._exc_info_to_string(err, test).splitlines():
            print('# ' + line)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)
        self._diagnose(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test)
        self._diagnose(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, ' # SKIP ' + reason)


def main():
    # The default backend must not come from the caller's environment.
    os.environ.pop('TERRET_EXECUTOR', None)

    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    print('TAP version 13')
    print('1..%d' % suite.countTestCases(), flush=True)
    result = TapResult()
    suite.run(result)
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
