/* terret-utf8.c: where a cut may fall in UTF-8 text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every capture and every stretch a run hands on is cut by the library,
 * never inside a character the command wrote: these say where.
 */

#include "config.h"

#include "terret-utf8-private.h"

static inline gboolean
utf8_is_continuation (guint8 byte)
{
  return (byte & 0xC0) == 0x80;
}

/* The length a UTF-8 sequence beginning with @lead announces, or 0 when
 * @lead cannot begin one (a continuation byte, 0xF8..0xFF). Only the bit
 * pattern counts, not whether the code point would be valid: C0, C1 and
 * F5..F7 announce 2, 2 and 4 bytes like any other lead. */
static inline guint
utf8_sequence_length (guint8 lead)
{
  if (lead < 0x80)
    return 1;
  if ((lead & 0xE0) == 0xC0)
    return 2;
  if ((lead & 0xF0) == 0xE0)
    return 3;
  if ((lead & 0xF8) == 0xF0)
    return 4;
  return 0;
}

/*
 * _terret_utf8_whole_prefix:
 * @data: (array length=len) (nullable): the bytes before a cut
 * @len: where the cut lies, the number of bytes in @data
 *
 * Backs a cut at @len off to the last whole UTF-8 character, so that a
 * cut made by the caller never splits a character in two.
 *
 * Only an incomplete trailing character is removed, and so never more
 * than three bytes: the function walks back over at most three
 * continuation bytes (`10xxxxxx`) to a lead byte, and when the length
 * the lead announces (`0xxxxxxx` 1, `110xxxxx` 2, `1110xxxx` 3,
 * `11110xxx` 4) is longer than the bytes present, the cut moves to just
 * before the lead.
 *
 * Bytes that were never valid UTF-8 are left exactly as they are: a
 * stray continuation byte, a run of four or more continuation bytes, or
 * a byte that cannot begin a sequence (0xF8..0xFF) ends the walk without
 * moving the cut. The rule reads only the length a lead announces, not
 * the code point: a complete-length overlong such as `C0 80` is kept
 * verbatim, and a lone `C0` at the cut is removed like any other
 * incomplete sequence (at most three bytes that the cut was losing
 * anyway).
 *
 * Returns: the length of the prefix of @data that ends on a character
 *   boundary, at most @len and at least `@len - 3`
 */
gsize
_terret_utf8_whole_prefix (const guint8 *data,
                           gsize         len)
{
  gsize trailing = 0;
  gsize lead_at;

  g_return_val_if_fail (data != NULL || len == 0, 0);

  while (trailing < 3 && trailing < len &&
         utf8_is_continuation (data[len - 1 - trailing]))
    trailing++;

  /* Nothing but continuation bytes back to the start: no lead to judge. */
  if (trailing == len)
    return len;

  /* A fourth continuation byte is no lead either: utf8_sequence_length()
   * answers 0 for it, which keeps the cut where it is. */
  lead_at = len - 1 - trailing;
  if (utf8_sequence_length (data[lead_at]) > trailing + 1)
    return lead_at;

  return len;
}

/*
 * _terret_utf8_whole_suffix:
 * @data: (array length=len) (nullable): the bytes around a cut
 * @len: the number of bytes in @data
 * @start: where the kept part begins, at most @len
 *
 * The mirror of [func@Terret.utf8_whole_prefix] for a cut at the front:
 * the caller keeps `data[start..len)` and must not begin it in the middle
 * of a character.
 *
 * The continuation bytes at @start are skipped only when they belong to a
 * character whose lead byte lies before @start, at most three bytes back,
 * and whose announced length reaches past @start. Any other continuation
 * bytes at @start (with no lead, or past the length their lead announced)
 * were never part of a valid character and are kept as they are.
 *
 * Returns: the first offset at or after @start that does not split a
 *   character, at most `@start + 3`
 */
gsize
_terret_utf8_whole_suffix (const guint8 *data,
                           gsize         len,
                           gsize         start)
{
  gsize back;

  g_return_val_if_fail (data != NULL || len == 0, start);
  g_return_val_if_fail (start <= len, len);

  if (start == len || !utf8_is_continuation (data[start]))
    return start;

  for (back = 1; back <= 3 && back <= start; back++)
    {
      guint8 byte = data[start - back];
      gsize char_end;
      gsize pos;

      if (utf8_is_continuation (byte))
        continue;

      /* The first non-continuation byte decides: either its character
       * reaches past @start, or the bytes at @start are not its own. */
      if (utf8_sequence_length (byte) <= back)
        return start;

      char_end = start - back + utf8_sequence_length (byte);
      for (pos = start; pos < char_end && pos < len && utf8_is_continuation (data[pos]); pos++)
        ;
      return pos;
    }

  return start;
}
