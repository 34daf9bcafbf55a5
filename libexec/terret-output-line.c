/* terret-output-line.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-output-line.h"

/**
 * TerretOutputLine:
 *
 * One line of a command's output and where it began: the offset of its
 * first byte in its stream, counted as [method@Terret.Result.get_omitted_at]
 * counts, so with keep-full-output it is where the line is in the file.
 * [method@Terret.Result.get_omitted_errors] gives the lines of a cut
 * result's omitted middle that look like errors.
 *
 * Since: 0.2
 */
struct _TerretOutputLine
{
  gatomicrefcount ref_count;
  guint64 offset;
  GBytes *text;                 /* (owned) */
};

G_DEFINE_BOXED_TYPE (TerretOutputLine, terret_output_line,
                     terret_output_line_ref, terret_output_line_unref)

/**
 * terret_output_line_new:
 * @offset: where the line began in its stream
 * @text: the line's bytes, without its newline
 *
 * For backends: a line of output.
 *
 * Returns: (transfer full): a new line
 *
 * Since: 0.2
 */
TerretOutputLine *
terret_output_line_new (guint64  offset,
                        GBytes  *text)
{
  TerretOutputLine *self;

  g_return_val_if_fail (text != NULL, NULL);

  self = g_new0 (TerretOutputLine, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->offset = offset;
  self->text = g_bytes_ref (text);
  return self;
}

/**
 * terret_output_line_ref:
 * @self: a line
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
TerretOutputLine *
terret_output_line_ref (TerretOutputLine *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * terret_output_line_unref:
 * @self: (transfer full): a line
 *
 * Since: 0.2
 */
void
terret_output_line_unref (TerretOutputLine *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_bytes_unref (self->text);
  g_free (self);
}

/**
 * terret_output_line_get_offset:
 * @self: a line
 *
 * Gets where the line began: the offset of its first byte in its stream.
 *
 * Returns: a byte offset
 *
 * Since: 0.2
 */
guint64
terret_output_line_get_offset (TerretOutputLine *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->offset;
}

/**
 * terret_output_line_get_text:
 * @self: a line
 *
 * Gets the line's bytes as the command wrote them, without its newline:
 * its start, when the line was longer than what a scan keeps (a cut
 * that never splits a character). They need not be UTF-8.
 *
 * Returns: (transfer none): the line's bytes
 *
 * Since: 0.2
 */
GBytes *
terret_output_line_get_text (TerretOutputLine *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->text;
}
