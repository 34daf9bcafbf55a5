/* terret-result-omitted.c: what a result says of the bytes it does not hold
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where a capture's omitted span began, how many lines it held and which
 * of them looked like errors, the line a renderer shows in its place,
 * and the file that holds every byte with keep-full-output.
 */

#include "config.h"

#include "terret-result-fields-private.h"
#include "terret-result-private.h"

/**
 * terret_result_get_omitted_at:
 * @self: a result
 * @stream: which stream
 *
 * Gets where in @stream the omitted bytes began: the offset, counted from
 * the run's first byte of @stream, of the first of the
 * [method@Terret.Result.get_dropped] bytes the capture left out, which are
 * one contiguous span. With keep-full-output it is the offset of that
 * span in the file [method@Terret.Result.get_full_output] names. For a
 * whole run it equals [method@Terret.Result.get_cut_offset]; for a poll
 * of a detached command it also counts the output of earlier results.
 * Meaningful only when [method@Terret.Result.get_dropped] is not 0.
 *
 * Returns: a byte offset into @stream
 *
 * Since: 0.2
 */
guint64
terret_result_get_omitted_at (TerretResult *self,
                              TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, 0);

  return self->omitted_at[stream];
}

/**
 * terret_result_get_omitted_lines:
 * @self: a result
 * @stream: which stream
 *
 * Gets how many lines the omitted bytes held: the newlines among them,
 * which is the number of omitted lines when the cut falls at line
 * starts, as it does where a newline is near. Counted as the bytes went
 * past, not by reading them again. Meaningful only when
 * [method@Terret.Result.get_dropped] is not 0.
 *
 * Returns: the newlines among the omitted bytes
 *
 * Since: 0.2
 */
guint64
terret_result_get_omitted_lines (TerretResult *self,
                                 TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, 0);

  return self->omitted_lines[stream];
}

/**
 * terret_result_get_omitted_errors:
 * @self: a result
 * @stream: which stream
 *
 * Gets the first lines among the omitted bytes that look like errors (at
 * most ten): a compiler's `file:line:col: error`, `error:` or `Error:`,
 * a test runner's `FAILED`, `FAIL:` or `not ok`, a Python `Traceback`, a
 * `panic:`. Each carries its offset in the stream, so a caller can read
 * around it in the full-output file. They were found as the output went
 * past, in bounded memory.
 *
 * Returns: (transfer none) (nullable) (element-type TerretOutputLine): the
 *   lines, empty when none looked like an error; %NULL when nothing was
 *   omitted
 *
 * Since: 0.2
 */
GPtrArray *
terret_result_get_omitted_errors (TerretResult *self,
                                  TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, NULL);

  return self->omitted_errors[stream];
}

/*
 * _terret_result_set_omitted_lines:
 * @errors: (element-type TerretOutputLine): the error lines, referenced
 *
 * For the engines: what the omitted bytes of @stream held.
 */
void
_terret_result_set_omitted_lines (TerretResult *self,
                                  TerretStream  stream,
                                  guint64       lines,
                                  GPtrArray    *errors)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (stream <= TERRET_STREAM_STDERR);

  self->omitted_lines[stream] = lines;
  g_clear_pointer (&self->omitted_errors[stream], g_ptr_array_unref);
  self->omitted_errors[stream] = g_ptr_array_ref (errors);
}

/*
 * _terret_result_report_omitted:
 *
 * Tells @self what the bytes @capture's cut finish omitted from @stream
 * held: how many lines, and the first lines among them that look like
 * errors. @base is the stream offset of the capture's first byte.
 */
void
_terret_result_report_omitted (TerretResult        *self,
                               TerretStream         stream,
                               TerretStreamCapture *capture,
                               guint64              base)
{
  guint64 n_lines = 0;
  g_autoptr(GPtrArray) lines = _terret_stream_capture_take_omitted (capture, base, &n_lines);

  if (lines != NULL)
    _terret_result_set_omitted_lines (self, stream, n_lines, lines);
}

/**
 * terret_result_set_omitted_at:
 * @self: a result
 * @stream: which stream
 * @omitted_at: the stream offset of the first omitted byte
 *
 * For backends: sets where in @stream the omitted bytes began, after
 * [method@Terret.Result.set_dropped] (which sets it to the cut offset).
 *
 * Since: 0.2
 */
void
terret_result_set_omitted_at (TerretResult *self,
                              TerretStream  stream,
                              guint64       omitted_at)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (stream <= TERRET_STREAM_STDERR);

  self->omitted_at[stream] = omitted_at;
}

static GBytes *
result_get_stream (TerretResult *self,
                   TerretStream  stream)
{
  return stream == TERRET_STREAM_STDOUT ? self->stdout_bytes : self->stderr_bytes;
}

/**
 * terret_result_format_omitted:
 * @self: a result
 * @stream: which stream
 *
 * Formats the marker line a host shows in place of the bytes of @stream
 * the capture left out, to be written at
 * [method@Terret.Result.get_cut_offset] in the kept bytes, for instance
 *
 * ```
 * [… 524288 bytes omitted, from byte 524288 of the output (43690 lines) …]
 * [… at byte 600123: src/main.c:12:5: error: expected ‘;’ …]
 * ```
 *
 * It ends with a newline, and begins with one when the kept bytes before
 * the cut do not end a line, so the marker always stands on lines of its
 * own; neither newline is part of the output. With keep-full-output the
 * first line also names the file that holds every byte. The lines after
 * it are the omitted lines that look like errors
 * ([method@Terret.Result.get_omitted_errors]), each with its offset. The output itself is
 * never changed: a host that shows the marker splices it in.
 *
 * ```c
 * g_autofree char *marker = terret_result_format_omitted (result, TERRET_STREAM_STDOUT);
 * gsize cut = terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT);
 *
 * fwrite (data, 1, marker != NULL ? cut : len, stdout);
 * if (marker != NULL)
 *   {
 *     fputs (marker, stdout);
 *     fwrite (data + cut, 1, len - cut, stdout);
 *   }
 * ```
 *
 * Returns: (transfer full) (nullable): the marker line, or %NULL when
 *   nothing of @stream was left out
 *
 * Since: 0.2
 */
char *
terret_result_format_omitted (TerretResult *self,
                              TerretStream  stream)
{
  GBytes *bytes;
  const guint8 *data;
  gsize len = 0;
  gsize cut;
  const char *path;
  GPtrArray *errors;
  GString *text;

  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, NULL);

  if (self->dropped[stream] == 0)
    return NULL;
  errors = self->omitted_errors[stream];

  bytes = result_get_stream (self, stream);
  data = bytes != NULL ? g_bytes_get_data (bytes, &len) : NULL;
  cut = MIN (self->cut_offset[stream], len);
  path = terret_result_get_full_output (self, stream);

  text = g_string_new (NULL);
  g_string_append_printf (text, "%s[… %" G_GUINT64_FORMAT " bytes omitted, from byte %" G_GUINT64_FORMAT
                          " of the %s (%" G_GUINT64_FORMAT " lines)%s%s …]\n",
                          cut > 0 && data[cut - 1] != '\n' ? "\n" : "",
                          self->dropped[stream], self->omitted_at[stream],
                          stream == TERRET_STREAM_STDOUT ? "output" : "standard error",
                          self->omitted_lines[stream],
                          path != NULL ? "; all of it is in " : "", path != NULL ? path : "");

  /* The lines a reader most needs from the middle, where they were. */
  for (guint i = 0; errors != NULL && i < errors->len; i++)
    {
      TerretOutputLine *line = g_ptr_array_index (errors, i);
      gsize line_len = 0;
      const char *line_data = g_bytes_get_data (terret_output_line_get_text (line), &line_len);
      g_autofree char *valid = g_utf8_make_valid (line_data != NULL ? line_data : "", line_len);

      g_string_append_printf (text, "[… at byte %" G_GUINT64_FORMAT ": %s …]\n",
                              terret_output_line_get_offset (line), valid);
    }

  return g_string_free (text, FALSE);
}

/**
 * terret_result_get_full_output:
 * @self: a result
 * @stream: which stream
 *
 * Gets the file that holds every byte of @stream, when the run kept its
 * full output (the `keep-full-output` setting, or
 * [method@Terret.Request.set_keep_full_output]): mode 0600, in the
 * `full-output-dir` directory, at most `full-output-max` bytes (the
 * notice says when it holds fewer). Every result of a detached command
 * names the same file, which grows until the command ends.
 *
 * The executor removes the file when its session closes
 * ([method@Terret.Executor.close_session], [method@Terret.Executor.close_all]
 * or the executor's disposal), unless the caller took it with
 * [method@Terret.Result.steal_full_output].
 *
 * Returns: (nullable) (type filename): the file's path, or %NULL when the
 *   run did not keep its full output (or @stream is merged)
 *
 * Since: 0.2
 */
const char *
terret_result_get_full_output (TerretResult *self,
                               TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, NULL);

  return self->spool[stream] != NULL ? _terret_spool_get_path (self->spool[stream]) : NULL;
}

/**
 * terret_result_steal_full_output:
 * @self: a result
 * @stream: which stream
 *
 * Takes ownership of the file [method@Terret.Result.get_full_output]
 * names: the executor no longer removes it, and the caller deletes it
 * when it is done. The result goes on naming it.
 *
 * Returns: (transfer full) (nullable) (type filename): the file's path,
 *   or %NULL when there is none, it was taken already, or it was removed
 *   with its session
 *
 * Since: 0.2
 */
char *
terret_result_steal_full_output (TerretResult *self,
                                 TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, NULL);

  return self->spool[stream] != NULL ? _terret_spool_take (self->spool[stream]) : NULL;
}

/* For the engines: the full-output file of @stream. */
void
_terret_result_set_spool (TerretResult *self,
                          TerretStream  stream,
                          TerretSpool  *spool)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (stream <= TERRET_STREAM_STDERR);

  if (spool != NULL)
    _terret_spool_ref (spool);
  g_clear_pointer (&self->spool[stream], _terret_spool_unref);
  self->spool[stream] = spool;
}
