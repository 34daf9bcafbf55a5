/* test-capture.c: the capture primitives against simple reference models
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <glib/gstdio.h>

#include "terret-capture-private.h"
#include "terret-result-private.h"
#include "terret-spool-private.h"
#include "terret-utf8-private.h"
#include "terret-test-utils.h"

/* Reference models ------------------------------------------------------- */

/* These restate the rules in the most direct form, over a buffer that
 * keeps everything, so the captures' bounded and incremental versions can
 * be compared against them. */

static gboolean
ref_is_continuation (guint8 byte)
{
  return byte >= 0x80 && byte <= 0xBF;
}

/* The length a lead byte announces by its bit pattern; 0 for no lead. */
static gsize
ref_announced_length (guint8 byte)
{
  if (byte <= 0x7F)
    return 1;
  if (byte >= 0xC0 && byte <= 0xDF)
    return 2;
  if (byte >= 0xE0 && byte <= 0xEF)
    return 3;
  if (byte >= 0xF0 && byte <= 0xF7)
    return 4;
  return 0;
}

/* The cut at @len moves to a lead at @i (at most three bytes back, only
 * continuation bytes after it) whose announced length reaches past @len. */
static gsize
ref_whole_prefix (const guint8 *data,
                  gsize         len)
{
  gsize i;

  for (i = len >= 3 ? len - 3 : 0; i < len; i++)
    {
      gboolean only_continuations = TRUE;
      gsize j;

      for (j = i + 1; j < len; j++)
        only_continuations = only_continuations && ref_is_continuation (data[j]);

      if (!ref_is_continuation (data[i]) && only_continuations &&
          ref_announced_length (data[i]) > len - i)
        return i;
    }

  return len;
}

/* The front cut at @start moves past the continuation bytes of a
 * character whose lead lies at most three bytes before @start (only
 * continuation bytes between) and whose announced length reaches past it. */
static gsize
ref_whole_suffix (const guint8 *data,
                  gsize         len,
                  gsize         start)
{
  gsize i;

  for (i = start >= 3 ? start - 3 : 0; i < start; i++)
    {
      gboolean only_continuations = TRUE;
      gsize j;

      for (j = i + 1; j < start; j++)
        only_continuations = only_continuations && ref_is_continuation (data[j]);

      if (!ref_is_continuation (data[i]) && only_continuations &&
          ref_announced_length (data[i]) > start - i)
        {
          gsize end = i + ref_announced_length (data[i]);

          for (j = start; j < end && j < len && ref_is_continuation (data[j]); j++)
            ;
          return j;
        }
    }

  return start;
}

/* UTF-8 ------------------------------------------------------------------ */

typedef struct {
  const char *data;
  gsize len;
  gsize whole_prefix;
} PrefixCase;

static void
test_utf8_prefix_cases (void)
{
  /* Each line is a decision: what a cut at the end of these bytes keeps. */
  static const PrefixCase cases[] = {
    { "", 0, 0 },
    { "a", 1, 1 },
    { "\xc3\xa9", 2, 2 },                   /* é whole */
    { "\xc3", 1, 0 },                       /* é cut after its lead */
    { "a\xe2\x82", 3, 1 },                  /* € missing one byte */
    { "a\xe2", 2, 1 },
    { "a\xf0\x9f\x98", 4, 1 },              /* 😀 missing one byte */
    { "a\xf0\x9f\x98\x80", 5, 5 },
    { "\xff", 1, 1 },                       /* never UTF-8: kept */
    { "a\xfe", 2, 2 },
    { "a\xf8\x80", 3, 3 },                  /* 0xF8 is no lead */
    { "\x80", 1, 1 },                       /* stray continuation, no lead */
    { "a\x80", 2, 2 },                      /* 'a' announces 1 byte */
    { "\x80\x80\x80\x80", 4, 4 },
    { "\xf0\x80\x80\x80\x80", 5, 5 },       /* four continuations: not ours */
    { "\xe2\x82\xac\x80", 4, 4 },           /* a continuation past € */
    { "\xc3\xa9\x80\x80", 4, 4 },
    { "\xc0\x80", 2, 2 },                   /* overlong, complete by length */
    { "a\xc0", 2, 1 },                      /* incomplete by length: cut */
    { "\xe0\x80", 2, 0 },
    { "\xed\xa0\x80", 3, 3 },               /* a surrogate, complete by length */
    { "\xf7\xbf\xbf", 3, 0 },               /* F7 announces 4 */
    { "\xf4\x8f\xbf\xbf", 4, 4 },           /* U+10FFFF */
  };

  g_test_summary ("A cut backs off only an incomplete trailing character; "
                  "bytes that were never UTF-8 stay; overlongs and "
                  "surrogates count as complete by their announced length");

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const guint8 *data = (const guint8 *) cases[i].data;

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpuint (_terret_utf8_whole_prefix (data, cases[i].len), ==, cases[i].whole_prefix);
      g_assert_cmpuint (ref_whole_prefix (data, cases[i].len), ==, cases[i].whole_prefix);
    }

  g_assert_cmpuint (_terret_utf8_whole_prefix (NULL, 0), ==, 0);
}

typedef struct {
  const char *data;
  gsize len;
  gsize start;
  gsize whole_suffix;
} SuffixCase;

static void
test_utf8_suffix_cases (void)
{
  static const SuffixCase cases[] = {
    { "", 0, 0, 0 },
    { "\xe2\x82\xac", 3, 0, 0 },
    { "\xe2\x82\xac", 3, 1, 3 },            /* inside €: past it */
    { "\xe2\x82\xac", 3, 2, 3 },
    { "\xe2\x82\xac", 3, 3, 3 },
    { "\xc3\xa9", 2, 1, 2 },
    { "\xf0\x9f\x98\x80z", 5, 1, 4 },
    { "\xf0\x9f\x98\x80z", 5, 3, 4 },
    { "\xf0\x9f\x98\x80z", 5, 4, 4 },
    { "\x80\x80", 2, 0, 0 },                /* no lead before: kept */
    { "\x80\x80", 2, 1, 1 },
    { "a\x80\x80", 3, 1, 1 },               /* 'a' announces 1 byte */
    { "\xc3\xa9\x80", 3, 2, 2 },            /* past é's announced length */
    { "\xc3\xa9\x80", 3, 1, 2 },            /* é's own byte only */
    { "\xe2\x82", 2, 1, 2 },                /* a truncated € */
    { "\xe2\x82" "A", 3, 1, 2 },            /* malformed: stop at 'A' */
    { "\xf0\x80\x80\x80\x80", 5, 4, 4 },    /* lead four bytes back */
    { "\xff\x80", 2, 1, 1 },                /* 0xFF is no lead */
    { "\xc0\x80", 2, 1, 2 },                /* overlong, by length */
  };

  g_test_summary ("A front cut skips only the continuation bytes of a "
                  "character whose lead lies before it");

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const guint8 *data = (const guint8 *) cases[i].data;

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_cmpuint (_terret_utf8_whole_suffix (data, cases[i].len, cases[i].start), ==, cases[i].whole_suffix);
      g_assert_cmpuint (ref_whole_suffix (data, cases[i].len, cases[i].start), ==, cases[i].whole_suffix);
    }

  g_assert_cmpuint (_terret_utf8_whole_suffix (NULL, 0, 0), ==, 0);
}

/* Every code point, in a context of other widths, cut at every byte:
 * the prefix must end, and the suffix begin, on the nearest boundary. */
static void
test_utf8_every_character (void)
{
  g_test_summary ("Cutting every Unicode scalar value at every byte backs "
                  "off (or forward) to the nearest character boundary");

  for (gunichar c = 0; c <= 0x10FFFF; c++)
    {
      guint8 buf[16];
      gsize before, n, after, len;

      if (c >= 0xD800 && c <= 0xDFFF)
        continue;

      /* "é" before, "€" after: a boundary on each side of @c that is
       * itself inside no ASCII run. */
      memcpy (buf, "\xc3\xa9", 2);
      before = 2;
      n = g_unichar_to_utf8 (c, (char *) buf + before);
      memcpy (buf + before + n, "\xe2\x82\xac", 3);
      after = 3;
      len = before + n + after;
      /* (GLib's validation refuses NUL, which is fine UTF-8.) */
      g_assert_true (c == 0 || g_utf8_validate_len ((const char *) buf, len, NULL));

      for (gsize k = 0; k <= n; k++)
        {
          gsize cut = before + k;
          gsize back = k == n ? cut : before;
          gsize forward = k == 0 ? cut : before + n;

          if (_terret_utf8_whole_prefix (buf, cut) != back ||
              _terret_utf8_whole_suffix (buf, len, cut) != forward)
            g_error ("U+%04X cut after %" G_GSIZE_FORMAT " of its bytes: "
                     "prefix %" G_GSIZE_FORMAT " (want %" G_GSIZE_FORMAT "), "
                     "suffix %" G_GSIZE_FORMAT " (want %" G_GSIZE_FORMAT ")",
                     c, k, _terret_utf8_whole_prefix (buf, cut), back,
                     _terret_utf8_whole_suffix (buf, len, cut), forward);
        }
    }
}

/* Every byte sequence up to five long over bytes standing for each class
 * (ASCII, continuation edges, each lead width, the non-lead 0xF8..0xFF),
 * against the reference, at every front cut. */
static void
test_utf8_exhaustive_bytes (void)
{
  static const guint8 alphabet[] = {
    0x41, 0x0a, 0x80, 0xbf, 0xc0, 0xc3, 0xdf, 0xe2, 0xef, 0xf0, 0xf4, 0xf7, 0xf8, 0xff,
  };
  const gsize n = G_N_ELEMENTS (alphabet);
  guint64 checked = 0;

  g_test_summary ("Every short sequence over every byte class agrees with "
                  "the reference rule and keeps its bounds");

  for (gsize len = 0; len <= 5; len++)
    {
      gsize count = 1;

      for (gsize i = 0; i < len; i++)
        count *= n;

      for (gsize code = 0; code < count; code++)
        {
          guint8 buf[5];
          gsize rest = code;
          gsize prefix;

          for (gsize i = 0; i < len; i++)
            {
              buf[i] = alphabet[rest % n];
              rest /= n;
            }

          prefix = _terret_utf8_whole_prefix (buf, len);
          if (prefix != ref_whole_prefix (buf, len))
            g_error ("prefix of sequence %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT, code, len);
          g_assert_cmpuint (prefix, <=, len);
          g_assert_cmpuint (len - prefix, <=, 3);

          /* A valid prefix stays valid, and is only ever shortened when
           * the bytes it ended with were not. */
          if (g_utf8_validate_len ((const char *) buf, len, NULL))
            g_assert_cmpuint (prefix, ==, len);

          for (gsize start = 0; start <= len; start++)
            {
              gsize suffix = _terret_utf8_whole_suffix (buf, len, start);

              if (suffix != ref_whole_suffix (buf, len, start))
                g_error ("suffix of sequence %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT
                         " from %" G_GSIZE_FORMAT, code, len, start);
              g_assert_cmpuint (suffix, >=, start);
              g_assert_cmpuint (suffix - start, <=, 3);
              g_assert_cmpuint (suffix, <=, len);
              checked++;
            }
        }
    }

  g_assert_cmpuint (checked, >, 500000);
}

/* Random valid UTF-8 cut at random places: the kept parts are valid. */
static void
test_utf8_random_valid (void)
{
  static const char *const tokens[] = { "a", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xdf\xbf", "\xef\xbf\xbf" };

  g_test_summary ("Cutting valid UTF-8 anywhere leaves valid UTF-8 on both sides");

  for (guint iter = 0; iter < 2000; iter++)
    {
      g_autoptr(GString) text = g_string_new (NULL);
      gsize cut, prefix, suffix;

      while (text->len < 40)
        g_string_append (text, tokens[g_test_rand_int_range (0, G_N_ELEMENTS (tokens))]);

      cut = g_test_rand_int_range (0, text->len + 1);
      prefix = _terret_utf8_whole_prefix ((const guint8 *) text->str, cut);
      suffix = _terret_utf8_whole_suffix ((const guint8 *) text->str, text->len, cut);
      g_assert_true (g_utf8_validate_len (text->str, prefix, NULL));
      g_assert_true (g_utf8_validate_len (text->str + suffix, text->len - suffix, NULL));
      g_assert_cmpuint (cut - prefix, <=, 3);
      g_assert_cmpuint (suffix - cut, <=, 3);
    }
}

/* Head capture ----------------------------------------------------------- */

typedef struct {
  gsize limit;
  gsize window;
  GByteArray *stream;           /* everything appended */
  gboolean overflowed;
  guint64 roll_start;
  guint64 last_before;          /* where the latest append began */
} HeadModel;

static void
head_model_init (HeadModel *model,
                 gsize      limit,
                 gsize      window)
{
  model->limit = limit;
  model->window = window;
  model->stream = g_byte_array_new ();
  model->overflowed = FALSE;
  model->roll_start = 0;
  model->last_before = 0;
}

static void
head_model_clear (HeadModel *model)
{
  g_clear_pointer (&model->stream, g_byte_array_unref);
}

/* The window rule: on passing the limit, and whenever the window has
 * grown past twice its size, it begins `window` bytes before the latest
 * append. */
static void
head_model_append (HeadModel    *model,
                   const guint8 *data,
                   gsize         len)
{
  guint64 before = model->stream->len;
  guint64 must_keep = before > model->window ? before - model->window : 0;
  guint64 seen;

  if (len == 0)
    return;

  g_byte_array_append (model->stream, data, len);
  seen = model->stream->len;
  model->last_before = before;

  if (!model->overflowed && seen > model->limit)
    {
      model->overflowed = TRUE;
      model->roll_start = must_keep;
    }
  else if (model->overflowed && seen - model->roll_start > 2 * model->window)
    model->roll_start = must_keep;
}

/* Compares what @capture shows a scanner with the model, and checks the
 * promises that do not depend on the trimming schedule. */
static void
head_check_peek (TerretHeadCapture *capture,
                 HeadModel         *model)
{
  guint64 seen = model->stream->len;
  guint64 region_start = G_MAXUINT64;
  gsize region_len = G_MAXSIZE;
  const guint8 *region;
  guint64 want_start = model->overflowed ? model->roll_start : 0;

  g_assert_cmpuint (_terret_head_capture_get_seen (capture), ==, seen);

  region = _terret_head_capture_peek (capture, &region_start, &region_len);
  g_assert_nonnull (region);
  g_assert_cmpuint (region_start, ==, want_start);
  g_assert_cmpmem (region, region_len, model->stream->data + want_start, seen - want_start);

  /* Always ends at the stream's end. */
  g_assert_cmpuint (region_start + region_len, ==, seen);

  if (seen > model->limit)
    {
      gsize last_len = seen - model->last_before;

      /* The latest append and the window before it: a marker ending in
       * that append is whole, one straddling the limit included. */
      g_assert_cmpuint (region_start, <=, model->last_before > model->window ? model->last_before - model->window : 0);
      /* Bounded memory whatever the appends. */
      g_assert_cmpuint (region_len, <=, MAX (2 * model->window, model->window + last_len));
    }
}

/* Finishes a copy of @capture at @end (or partially when @end is
 * G_MAXUINT64) and compares with the model. */
static void
head_check_finish (TerretHeadCapture *capture,
                   HeadModel         *model,
                   guint64            end)
{
  g_autoptr(TerretHeadCapture) copy = g_boxed_copy (_terret_head_capture_get_type (), capture);
  g_autoptr(GBytes) bytes = NULL;
  const guint8 *stream = model->stream->data;
  gsize seen = model->stream->len;
  gsize head = MIN (seen, model->limit);
  guint64 dropped = G_MAXUINT64;
  gsize want_len;
  guint64 want_dropped;

  if (end == G_MAXUINT64)
    {
      bytes = _terret_head_capture_finish_partial (copy, &dropped);
      want_len = ref_whole_prefix (stream, head);
      want_dropped = seen - want_len;
    }
  else
    {
      bytes = _terret_head_capture_finish (copy, end, &dropped);
      want_len = end <= head ? end : ref_whole_prefix (stream, model->limit);
      want_dropped = end - want_len;
      g_assert_cmpuint (want_len, <=, end);
    }

  g_assert_nonnull (bytes);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), stream, want_len);
  g_assert_cmpuint (dropped, ==, want_dropped);
  g_assert_cmpuint (_terret_head_capture_get_seen (copy), ==, seen);
}

static void
head_check_all_finishes (TerretHeadCapture *capture,
                         HeadModel         *model)
{
  for (guint64 end = 0; end <= model->stream->len; end++)
    head_check_finish (capture, model, end);
  head_check_finish (capture, model, G_MAXUINT64);
}

static void
test_head_every_chunking (void)
{
  /* a, €, 😀, an invalid byte, a newline: cuts can fall in each. */
  static const guint8 input[] = "a\xe2\x82\xac\xf0\x9f\x98\x80\xff\n";
  const gsize len = sizeof input - 1;

  g_test_summary ("Every limit, window and chunking of a short stream "
                  "matches the reference model in what a scanner sees "
                  "and what either finish returns");

  for (gsize limit = 0; limit <= len + 2; limit++)
    for (gsize window = 1; window <= 6; window++)
      for (guint pattern = 0; pattern < (1u << (len - 1)); pattern++)
        {
          g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (limit, window);
          HeadModel model;
          gsize from = 0;

          head_model_init (&model, limit, window);
          head_check_peek (capture, &model);

          /* Bit i of @pattern set: a chunk ends after byte i. */
          for (gsize i = 0; i < len; i++)
            {
              if (i == len - 1 || (pattern & (1u << i)) != 0)
                {
                  _terret_head_capture_append (capture, input + from, i + 1 - from);
                  head_model_append (&model, input + from, i + 1 - from);
                  head_check_peek (capture, &model);
                  from = i + 1;
                }
            }

          /* The finishes depend on the final state only; checking them on
           * a subset of patterns keeps this quick under valgrind. */
          if (pattern % 7 == 0 || pattern == (1u << (len - 1)) - 1)
            head_check_all_finishes (capture, &model);
          else
            head_check_finish (capture, &model, G_MAXUINT64);

          head_model_clear (&model);
        }
}

static void
random_stream (GByteArray *out,
               gsize       len)
{
  static const char *const tokens[] = {
    "a", "b", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\x80",
  };

  while (out->len < len)
    {
      const char *token = tokens[g_test_rand_int_range (0, G_N_ELEMENTS (tokens))];

      g_byte_array_append (out, (const guint8 *) token, strlen (token));
    }
  g_byte_array_set_size (out, len);
}

static gsize
random_chunk (gsize remaining)
{
  gsize size;

  /* Mostly small reads, now and then one far bigger than the window. */
  if (g_test_rand_int_range (0, 8) == 0)
    size = g_test_rand_int_range (1, 200);
  else
    size = g_test_rand_int_range (0, 12);

  return MIN (size, remaining);
}

static void
test_head_random (void)
{
  g_test_summary ("Random streams, limits, windows and chunkings (empty "
                  "appends included) match the reference model at every step");

  for (guint iter = 0; iter < 3000; iter++)
    {
      g_autoptr(GByteArray) input = g_byte_array_new ();
      gsize limit = g_test_rand_int_range (0, 80);
      gsize window = g_test_rand_int_range (1, 16);
      g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (limit, window);
      HeadModel model;
      gsize from = 0;

      random_stream (input, g_test_rand_int_range (0, 300));
      head_model_init (&model, limit, window);

      while (from < input->len)
        {
          gsize n = random_chunk (input->len - from);

          _terret_head_capture_append (capture, input->data + from, n);
          head_model_append (&model, input->data + from, n);
          from += n;
          head_check_peek (capture, &model);

          if (g_test_rand_int_range (0, 10) == 0)
            head_check_finish (capture, &model, g_test_rand_int_range (0, from + 1));
        }

      head_check_finish (capture, &model, G_MAXUINT64);
      head_check_finish (capture, &model, input->len);
      head_check_finish (capture, &model, g_test_rand_int_range (0, input->len + 1));
      head_model_clear (&model);
    }
}

#define MARKER "\x1b]terret;7f3a9c01e2d45b68;"

/* Feeds @output then the marker and a status through a head capture in
 * random chunks, scanning what peek shows after every append the way a
 * backend does, and finishes at the marker. */
static void
head_scan_and_finish (const guint8 *output,
                      gsize         output_len,
                      gsize         limit,
                      gsize         window,
                      GBytes      **out_bytes,
                      guint64      *out_dropped)
{
  g_autoptr(GByteArray) stream = g_byte_array_new ();
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (limit, window);
  guint64 found = G_MAXUINT64;
  gsize from = 0;

  g_byte_array_append (stream, output, output_len);
  g_byte_array_append (stream, (const guint8 *) MARKER "0\n", strlen (MARKER "0\n"));

  while (from < stream->len && found == G_MAXUINT64)
    {
      gsize n = MAX (random_chunk (stream->len - from), 1);
      guint64 region_start;
      gsize region_len;
      const guint8 *region;
      const guint8 *hit;

      _terret_head_capture_append (capture, stream->data + from, n);
      from += n;

      region = _terret_head_capture_peek (capture, &region_start, &region_len);
      hit = memmem (region, region_len, MARKER, strlen (MARKER));
      if (hit != NULL)
        found = region_start + (guint64) (hit - region);
    }

  g_assert_cmpuint (found, ==, output_len);
  *out_bytes = _terret_head_capture_finish (capture, found, out_dropped);
}

static void
test_head_marker_straddles_limit (void)
{
  const gsize marker_len = strlen (MARKER);

  g_test_summary ("A marker that begins before the limit and ends past it "
                  "is found in peek's region, and no byte of it is output");

  /* An even limit falls between two "é", an odd one inside one. */
  for (gsize limit = 64; limit <= 65; limit++)
    {
      for (gsize output_len = limit - marker_len; output_len <= limit + marker_len; output_len++)
      for (guint iter = 0; iter < 20; iter++)
        {
          g_autofree guint8 *output = g_malloc (output_len);
          g_autoptr(GBytes) bytes = NULL;
          guint64 dropped = G_MAXUINT64;
          gsize want_len;

          /* "é" repeated, so the limit falls inside a character half the
           * time; ending with a lone 'x' when the length is odd. */
          for (gsize i = 0; i < output_len; i++)
            output[i] = (i % 2 == 0) ? 0xc3 : 0xa9;
          if (output_len % 2 == 1)
            output[output_len - 1] = 'x';

          head_scan_and_finish (output, output_len, limit, marker_len, &bytes, &dropped);

          if (output_len <= limit)
            want_len = output_len;
          else
            want_len = limit % 2 == 0 ? limit : limit - 1;

          g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), output, want_len);
          g_assert_cmpuint (dropped, ==, output_len - want_len);
        }
    }
}

static void
test_head_marker_far_past_limit (void)
{
  g_test_summary ("A marker long after the limit is still found, with "
                  "bounded memory, and the dropped count reaches it exactly");

  for (guint iter = 0; iter < 50; iter++)
    {
      gsize output_len = g_test_rand_int_range (0, 20000);
      g_autoptr(GByteArray) output = g_byte_array_new ();
      g_autoptr(GBytes) bytes = NULL;
      guint64 dropped = G_MAXUINT64;
      gsize limit = g_test_rand_int_range (0, 200);
      gsize want_len;

      random_stream (output, output_len);
      head_scan_and_finish (output->data, output_len, limit, strlen (MARKER), &bytes, &dropped);

      want_len = output_len <= limit ? output_len : ref_whole_prefix (output->data, limit);
      g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), output->data, want_len);
      g_assert_cmpuint (dropped, ==, output_len - want_len);
    }
}

static void
test_head_utf8_cut (void)
{
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (4, 4);
  g_autoptr(TerretHeadCapture) invalid = _terret_head_capture_new (5, 4);
  g_autoptr(TerretHeadCapture) below = _terret_head_capture_new (100, 4);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped = 0;

  g_test_summary ("The limit backs off to a whole character, but not past "
                  "bytes that were never UTF-8; a marker within the limit "
                  "leaves the output exactly as written");

  /* "ab€cdef": the limit 4 falls after the €'s second byte. */
  _terret_head_capture_append (capture, (const guint8 *) "ab\xe2\x82\xac" "cdef", 9);
  bytes = _terret_head_capture_finish (capture, 9, &dropped);
  terret_test_assert_bytes_str (bytes, "ab");
  g_assert_cmpuint (dropped, ==, 7);
  g_clear_pointer (&bytes, g_bytes_unref);

  /* An invalid byte at the limit is output as written. */
  _terret_head_capture_append (invalid, (const guint8 *) "abcd\xff" "efgh", 9);
  bytes = _terret_head_capture_finish (invalid, 8, &dropped);
  terret_test_assert_bytes_eq (bytes, "abcd\xff", 5);
  g_assert_cmpuint (dropped, ==, 3);
  g_clear_pointer (&bytes, g_bytes_unref);

  /* Output that ends inside a character because the marker follows is
   * not ours to fix: the bytes are the command's. */
  _terret_head_capture_append (below, (const guint8 *) "ab\xe2\x82" "MARK", 8);
  bytes = _terret_head_capture_finish (below, 4, &dropped);
  terret_test_assert_bytes_eq (bytes, "ab\xe2\x82", 4);
  g_assert_cmpuint (dropped, ==, 0);
}

static void
test_head_partial (void)
{
  g_autoptr(TerretHeadCapture) below = _terret_head_capture_new (100, 8);
  g_autoptr(TerretHeadCapture) empty = _terret_head_capture_new (100, 8);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped = G_MAXUINT64;

  g_test_summary ("A stream that stopped without a marker is cut at a "
                  "whole character even below the limit, and the dropped "
                  "count covers everything seen");

  _terret_head_capture_append (below, (const guint8 *) "ok \xf0\x9f\x98", 6);
  bytes = _terret_head_capture_finish_partial (below, &dropped);
  terret_test_assert_bytes_str (bytes, "ok ");
  g_assert_cmpuint (dropped, ==, 3);
  g_clear_pointer (&bytes, g_bytes_unref);

  bytes = _terret_head_capture_finish_partial (empty, NULL);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);
}

static void
test_head_large_append (void)
{
  const gsize size = 4 * 1024 * 1024;
  g_autofree guint8 *data = g_malloc (size);
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (16, 8);
  g_autoptr(GBytes) bytes = NULL;
  guint64 region_start;
  gsize region_len;
  const guint8 *region;
  guint64 dropped;

  g_test_summary ("An append far larger than limit and window is kept only "
                  "until the next one, which drops all but the window of it");

  for (gsize i = 0; i < size; i++)
    data[i] = 'a' + i % 26;

  _terret_head_capture_append (capture, data, size);
  _terret_head_capture_append (capture, data, size);
  g_assert_cmpuint (_terret_head_capture_get_seen (capture), ==, 2 * (guint64) size);

  /* The latest append and the window before it. */
  region = _terret_head_capture_peek (capture, &region_start, &region_len);
  g_assert_cmpuint (region_start, ==, size - 8);
  g_assert_cmpuint (region_len, ==, size + 8);
  g_assert_cmpmem (region, 8, data + size - 8, 8);
  g_assert_cmpmem (region + 8, size, data, size);

  /* A small append leaves only the window and itself. */
  _terret_head_capture_append (capture, (const guint8 *) "xyz", 3);
  region = _terret_head_capture_peek (capture, &region_start, &region_len);
  g_assert_cmpuint (region_start, ==, 2 * (guint64) size - 8);
  g_assert_cmpuint (region_len, ==, 11);
  g_assert_cmpmem (region, 8, data + size - 8, 8);
  g_assert_cmpmem (region + 8, 3, "xyz", 3);

  bytes = _terret_head_capture_finish_partial (capture, &dropped);
  terret_test_assert_bytes_eq (bytes, (const char *) data, 16);
  g_assert_cmpuint (dropped, ==, 2 * (guint64) size + 3 - 16);
}

static void
test_head_limit_zero (void)
{
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (0, 4);
  g_autoptr(GBytes) bytes = NULL;
  guint64 region_start;
  gsize region_len;
  const guint8 *region;
  guint64 dropped;

  g_test_summary ("With a limit of 0 nothing is output, yet the marker is "
                  "found from the stream's first byte");

  region = _terret_head_capture_peek (capture, &region_start, &region_len);
  g_assert_nonnull (region);
  g_assert_cmpuint (region_len, ==, 0);

  _terret_head_capture_append (capture, (const guint8 *) "MARK", 4);
  region = _terret_head_capture_peek (capture, &region_start, &region_len);
  g_assert_cmpuint (region_start, ==, 0);
  g_assert_cmpmem (region, region_len, "MARK", 4);

  bytes = _terret_head_capture_finish (capture, 0, &dropped);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);
  g_assert_cmpuint (dropped, ==, 0);
}

static void
test_head_spent (void)
{
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (8, 4);
  g_autoptr(GBytes) bytes = NULL;
  GBytes *again;
  gsize region_len = 0;

  g_test_summary ("A capture can be finished once; afterwards only "
                  "get_seen and free remain, and misuse is reported");

  _terret_head_capture_append (capture, (const guint8 *) "hello", 5);
  bytes = _terret_head_capture_finish (capture, 5, NULL);
  terret_test_assert_bytes_str (bytes, "hello");
  g_assert_cmpuint (_terret_head_capture_get_seen (capture), ==, 5);

  g_test_expect_message ("Terret", G_LOG_LEVEL_CRITICAL, "*assertion*spent*failed*");
  again = _terret_head_capture_finish_partial (capture, NULL);
  g_test_assert_expected_messages ();
  g_assert_null (again);

  g_test_expect_message ("Terret", G_LOG_LEVEL_CRITICAL, "*assertion*spent*failed*");
  _terret_head_capture_append (capture, (const guint8 *) "x", 1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Terret", G_LOG_LEVEL_CRITICAL, "*assertion*spent*failed*");
  g_assert_null (_terret_head_capture_peek (capture, NULL, &region_len));
  g_test_assert_expected_messages ();

}

static void
test_head_end_past_seen (void)
{
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (8, 4);
  g_autoptr(GBytes) bytes = NULL;

  g_test_summary ("An end past the bytes seen is refused, and the capture "
                  "can still be finished properly");

  _terret_head_capture_append (capture, (const guint8 *) "abc", 3);

  g_test_expect_message ("Terret", G_LOG_LEVEL_CRITICAL, "*assertion*end*failed*");
  g_assert_null (_terret_head_capture_finish (capture, 4, NULL));
  g_test_assert_expected_messages ();

  bytes = _terret_head_capture_finish (capture, 3, NULL);
  terret_test_assert_bytes_str (bytes, "abc");
}

static void
test_head_boxed_type (void)
{
  GType type = _terret_head_capture_get_type ();
  g_autoptr(TerretHeadCapture) capture = _terret_head_capture_new (2, 1);
  g_autoptr(TerretHeadCapture) copy = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) copied = NULL;

  g_test_summary ("The head capture is a boxed type whose copy goes on "
                  "independently");

  g_assert_true (G_TYPE_IS_BOXED (type));
  g_assert_cmpstr (g_type_name (type), ==, "TerretHeadCapture");

  _terret_head_capture_append (capture, (const guint8 *) "ab", 2);
  copy = g_boxed_copy (type, capture);
  _terret_head_capture_append (capture, (const guint8 *) "cd", 2);
  _terret_head_capture_append (copy, (const guint8 *) "x", 1);

  bytes = _terret_head_capture_finish (capture, 4, NULL);
  copied = _terret_head_capture_finish_partial (copy, NULL);
  terret_test_assert_bytes_str (bytes, "ab");
  terret_test_assert_bytes_str (copied, "ab");
  g_assert_cmpuint (_terret_head_capture_get_seen (capture), ==, 4);
  g_assert_cmpuint (_terret_head_capture_get_seen (copy), ==, 3);
}

/* Tail capture ----------------------------------------------------------- */

typedef struct {
  gsize window;
  gsize overshoot;
  GByteArray *kept;
  guint64 seen;
  guint64 dropped;
} TailModel;

static void
tail_model_append (TailModel    *model,
                   const guint8 *data,
                   gsize         len)
{
  GByteArray *kept = model->kept;
  gsize keep, cut;
  const guint8 *newline;

  if (len == 0)
    return;

  model->seen += len;
  g_byte_array_append (kept, data, len);
  if (kept->len < model->window + model->overshoot)
    return;

  keep = kept->len - model->window;
  if (keep == 0)
    return;

  /* Just after the first newline from the byte before the keep point,
   * within the first half of the window. */
  newline = memchr (kept->data + keep - 1, '\n',
                    MIN (kept->len, keep + model->window / 2) - (keep - 1));
  cut = newline != NULL ? (gsize) (newline - kept->data) + 1
                        : ref_whole_suffix (kept->data, kept->len, keep);

  g_byte_array_remove_range (kept, 0, cut);
  model->dropped += cut;
}

static void
tail_check (TerretTailCapture *capture,
            TailModel         *model)
{
  g_autoptr(TerretTailCapture) copy = g_boxed_copy (_terret_tail_capture_get_type (), capture);
  g_autoptr(GBytes) bytes = NULL;
  gsize size = _terret_tail_capture_get_size (capture);
  guint64 dropped = G_MAXUINT64;

  g_assert_cmpuint (_terret_tail_capture_get_seen (capture), ==, model->seen);
  g_assert_cmpuint (size, ==, model->kept->len);
  g_assert_cmpuint (size, <=, model->window + model->overshoot);
  if (model->overshoot > 0)
    g_assert_cmpuint (size, <, model->window + model->overshoot);

  bytes = _terret_tail_capture_finish (copy, &dropped);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                   model->kept->data, model->kept->len);
  g_assert_cmpuint (dropped, ==, model->dropped);
  g_assert_cmpuint (dropped + size, ==, model->seen);
  g_assert_cmpuint (_terret_tail_capture_get_size (copy), ==, 0);
}

static void
test_tail_random (void)
{
  g_test_summary ("Random streams, windows, overshoots and chunkings match "
                  "the reference model after every append, within bounds");

  for (guint iter = 0; iter < 3000; iter++)
    {
      g_autoptr(GByteArray) input = g_byte_array_new ();
      gsize window = g_test_rand_int_range (0, 30);
      gsize overshoot = g_test_rand_int_range (0, 12);
      g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (window, overshoot);
      g_autoptr(GByteArray) kept = g_byte_array_new ();
      TailModel model = { window, overshoot, kept, 0, 0 };
      gsize from = 0;

      random_stream (input, g_test_rand_int_range (0, 400));
      tail_check (capture, &model);

      while (from < input->len)
        {
          gsize n = random_chunk (input->len - from);

          _terret_tail_capture_append (capture, input->data + from, n);
          tail_model_append (&model, input->data + from, n);
          from += n;
          tail_check (capture, &model);
        }
    }
}

static void
test_tail_newline_aligned (void)
{
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (12, 6);
  g_autoptr(TerretTailCapture) aligned = _terret_tail_capture_new (10, 5);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped;

  g_test_summary ("An eviction cuts just after a newline, and keeps a "
                  "line whole when the window already begins on it");

  /* 20 bytes: the last 12 begin at "b\nccc...", cut after that newline. */
  _terret_tail_capture_append (capture, (const guint8 *) "aaaa\nbbbb\ncccc\ndddd\n", 20);
  bytes = _terret_tail_capture_finish (capture, &dropped);
  terret_test_assert_bytes_str (bytes, "cccc\ndddd\n");
  g_assert_cmpuint (dropped, ==, 10);
  g_clear_pointer (&bytes, g_bytes_unref);

  /* The last 10 bytes begin exactly at "cccc": nothing more is lost. */
  _terret_tail_capture_append (aligned, (const guint8 *) "aaaa\nbbbb\ncccc\ndddd\n", 20);
  bytes = _terret_tail_capture_finish (aligned, &dropped);
  terret_test_assert_bytes_str (bytes, "cccc\ndddd\n");
  g_assert_cmpuint (dropped, ==, 10);
}

static void
test_tail_long_line (void)
{
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (10, 4);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped;

  g_test_summary ("A line longer than the window keeps its tail: a newline "
                  "past the first half of the window does not move the cut");

  _terret_tail_capture_append (capture, (const guint8 *) "0123456789abcdefghi\n", 20);
  bytes = _terret_tail_capture_finish (capture, &dropped);
  terret_test_assert_bytes_str (bytes, "abcdefghi\n");
  g_assert_cmpuint (dropped, ==, 10);
}

static void
test_tail_utf8_without_newline (void)
{
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (10, 4);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped;

  g_test_summary ("Without a newline the cut moves past a split character "
                  "and no further");

  /* Eight €: the last 10 of 24 bytes begin inside the fifth one. */
  _terret_tail_capture_append (capture,
                               (const guint8 *) "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                                                "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 24);
  bytes = _terret_tail_capture_finish (capture, &dropped);
  terret_test_assert_bytes_str (bytes, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
  g_assert_cmpuint (dropped, ==, 15);
}

static void
test_tail_large_append (void)
{
  const gsize size = 4 * 1024 * 1024;
  g_autofree guint8 *data = g_malloc (size);
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (100, 50);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped;

  g_test_summary ("An append far larger than the window keeps only the "
                  "window of its end");

  for (gsize i = 0; i < size; i++)
    data[i] = 'a' + i % 26;

  _terret_tail_capture_append (capture, (const guint8 *) "head\n", 5);
  _terret_tail_capture_append (capture, data, size);
  g_assert_cmpuint (_terret_tail_capture_get_size (capture), ==, 100);

  bytes = _terret_tail_capture_finish (capture, &dropped);
  terret_test_assert_bytes_eq (bytes, (const char *) data + size - 100, 100);
  g_assert_cmpuint (dropped, ==, size + 5 - 100);
}

static void
test_tail_spent (void)
{
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (8, 4);
  g_autoptr(GBytes) bytes = NULL;
  GBytes *again;

  g_test_summary ("A tail capture can be finished once; misuse is reported");

  _terret_tail_capture_append (capture, (const guint8 *) "hi\n", 3);
  bytes = _terret_tail_capture_finish (capture, NULL);
  terret_test_assert_bytes_str (bytes, "hi\n");
  g_assert_cmpuint (_terret_tail_capture_get_seen (capture), ==, 3);

  g_test_expect_message ("Terret", G_LOG_LEVEL_CRITICAL, "*assertion*spent*failed*");
  again = _terret_tail_capture_finish (capture, NULL);
  g_test_assert_expected_messages ();
  g_assert_null (again);
}

static void
test_tail_boxed_type (void)
{
  GType type = _terret_tail_capture_get_type ();
  g_autoptr(TerretTailCapture) capture = _terret_tail_capture_new (4, 2);
  g_autoptr(TerretTailCapture) copy = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) copied = NULL;

  g_test_summary ("The tail capture is a boxed type whose copy goes on "
                  "independently");

  g_assert_true (G_TYPE_IS_BOXED (type));
  g_assert_cmpstr (g_type_name (type), ==, "TerretTailCapture");

  _terret_tail_capture_append (capture, (const guint8 *) "ab", 2);
  copy = g_boxed_copy (type, capture);
  _terret_tail_capture_append (capture, (const guint8 *) "cdefgh", 6);
  _terret_tail_capture_append (copy, (const guint8 *) "x", 1);

  bytes = _terret_tail_capture_finish (capture, NULL);
  copied = _terret_tail_capture_finish (copy, NULL);
  terret_test_assert_bytes_str (bytes, "efgh");
  terret_test_assert_bytes_str (copied, "abx");
}

static void
test_tail_seq (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) seq = NULL;
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autoptr(TerretTailCapture) capture = NULL;
  g_autoptr(GBytes) bytes = NULL;
  GInputStream *out;
  const gsize window = TERRET_TAIL_CAPTURE_DEFAULT_WINDOW;
  const gsize overshoot = TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT;
  gsize max_size = 0;
  guint64 dropped;
  const char *kept;
  gsize kept_len;

  g_test_summary ("The real output of `seq 1 300000`, read in uneven "
                  "chunks, keeps a line-aligned tail of the default window "
                  "that ends with the last line");

  for (guint i = 1; i <= 300000; i++)
    g_string_append_printf (expected, "%u\n", i);

  seq = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "seq", "1", "300000", NULL);
  g_assert_no_error (error);
  out = g_subprocess_get_stdout_pipe (seq);

  capture = _terret_tail_capture_new (window, overshoot);
  for (;;)
    {
      guint8 buf[65536];
      gssize n = g_input_stream_read (out, buf, g_test_rand_int_range (1, sizeof buf + 1), NULL, &error);

      g_assert_no_error (error);
      if (n == 0)
        break;
      _terret_tail_capture_append (capture, buf, n);
      max_size = MAX (max_size, _terret_tail_capture_get_size (capture));
    }

  g_subprocess_wait_check (seq, NULL, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (_terret_tail_capture_get_seen (capture), ==, expected->len);
  g_assert_cmpuint (max_size, <, window + overshoot);

  bytes = _terret_tail_capture_finish (capture, &dropped);
  kept = g_bytes_get_data (bytes, &kept_len);

  /* The output is ~2 MB: something was dropped, the rest is the window
   * (less at most one line of alignment) plus what came after. */
  g_assert_cmpuint (dropped + kept_len, ==, expected->len);
  g_assert_cmpuint (dropped, >, 0);
  g_assert_cmpuint (kept_len, >=, window - strlen ("300000\n"));
  g_assert_cmpuint (kept_len, <, window + overshoot);

  /* The exact tail of the output, beginning on a line. */
  g_assert_cmpmem (kept, kept_len, expected->str + dropped, kept_len);
  g_assert_cmpint (expected->str[dropped - 1], ==, '\n');
  g_assert_true (g_str_has_suffix (expected->str, "300000\n"));
  g_assert_cmpmem (kept + kept_len - 7, 7, "300000\n", 7);
}

/* Head-tail capture ------------------------------------------------------ */

/* The head-tail rule over the whole stream: the first half backed off to
 * after a newline in its last quarter, else to a whole character; the last
 * half kept whole after a newline, else begun after a newline in its first
 * quarter, else past the rest of a split character. */
static GBytes *
head_tail_model (const guint8 *data,
                 gsize         len,
                 gsize         limit,
                 guint64      *dropped,
                 gsize        *cut)
{
  gsize head = limit / 2, tail = limit - head;
  gsize head_end = 0, start;
  GByteArray *out = g_byte_array_new ();

  if (len <= limit)
    {
      g_byte_array_append (out, data, len);
      *dropped = 0;
      *cut = len;
      return g_byte_array_free_to_bytes (out);
    }

  for (gsize pos = head; pos > head - head / 4; pos--)
    if (data[pos - 1] == '\n')
      {
        head_end = pos;
        break;
      }
  if (head_end == 0)
    head_end = ref_whole_prefix (data, head);

  start = len - tail;
  if (data[start - 1] != '\n')
    {
      gsize pos;

      for (pos = start; pos < len - tail + tail / 4 && data[pos] != '\n'; pos++)
        ;
      if (pos < len - tail + tail / 4)
        start = pos + 1;
      else
        start = ref_whole_suffix (data, len, start);
    }

  g_byte_array_append (out, data, head_end);
  g_byte_array_append (out, data + start, len - start);
  *dropped = len - out->len;
  *cut = head_end;
  return g_byte_array_free_to_bytes (out);
}

static void
head_tail_check (const guint8 *data,
                 gsize         len,
                 gsize         limit,
                 gsize         max_chunk)
{
  g_autoptr(TerretHeadTailCapture) capture = _terret_head_tail_capture_new (limit);
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GBytes) got = NULL;
  guint64 dropped = 1, expected_dropped = 0;
  gsize cut = 1, expected_cut = 0;
  gsize from = 0;

  while (from < len)
    {
      gsize n = max_chunk > 0 ? MIN (max_chunk, len - from) : random_chunk (len - from);

      _terret_head_tail_capture_append (capture, data + from, n);
      from += n;
      g_assert_cmpuint (_terret_head_tail_capture_get_seen (capture), ==, from);
      g_assert_cmpuint (_terret_head_tail_capture_get_size (capture), <=, limit + 4);
    }

  expected = head_tail_model (data, len, limit, &expected_dropped, &expected_cut);
  got = _terret_head_tail_capture_finish (capture, &dropped, &cut);
  terret_test_assert_bytes_eq (got, g_bytes_get_data (expected, NULL), g_bytes_get_size (expected));
  g_assert_cmpuint (dropped, ==, expected_dropped);
  g_assert_cmpuint (cut, ==, expected_cut);
  g_assert_cmpuint (g_bytes_get_size (got), <=, limit);
  g_assert_cmpuint (g_bytes_get_size (got) + dropped, ==, len);
}

static void
test_head_tail_every_chunking (void)
{
  g_test_summary ("Every limit and chunk size of short streams match the "
                  "reference rule, the ring wrapped at every position");

  for (guint iter = 0; iter < 200; iter++)
    {
      g_autoptr(GByteArray) input = g_byte_array_new ();

      random_stream (input, g_test_rand_int_range (0, 60));
      for (gsize limit = 0; limit <= 24; limit++)
        for (gsize chunk = 1; chunk <= 9; chunk++)
          head_tail_check (input->data, input->len, limit, chunk);
    }
}

static void
test_head_tail_random (void)
{
  g_test_summary ("Random streams, limits and chunkings match the reference "
                  "rule, within limit + 4 bytes at every step");

  for (guint iter = 0; iter < 3000; iter++)
    {
      g_autoptr(GByteArray) input = g_byte_array_new ();

      random_stream (input, g_test_rand_int_range (0, 600));
      head_tail_check (input->data, input->len, g_test_rand_int_range (0, 80), 0);
    }
}

static void
test_head_tail_lines (void)
{
  g_autoptr(TerretHeadTailCapture) capture = _terret_head_tail_capture_new (20);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped = 0;
  gsize cut = 0;

  g_test_summary ("Both cuts fall on line boundaries near them, and the "
                  "omitted span is exactly the bytes between");

  /* Head: the first 10 bytes "l1\nl2\nl3\nl" end after "l3\n"; tail: the
   * last 10 "4\nl5\nl6\nl7\n"... begin after the first newline. */
  _terret_head_tail_capture_append (capture, (const guint8 *) "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n", 24);
  bytes = _terret_head_tail_capture_finish (capture, &dropped, &cut);
  terret_test_assert_bytes_str (bytes, "l1\nl2\nl3\nl6\nl7\nl8\n");
  g_assert_cmpuint (cut, ==, 9);
  g_assert_cmpuint (dropped, ==, 6);
}

static void
test_head_tail_utf8 (void)
{
  /* "é" is C3 A9: twelve of them and nothing else, no newline at all. */
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(TerretHeadTailCapture) capture = _terret_head_tail_capture_new (11);
  g_autoptr(GBytes) bytes = NULL;
  guint64 dropped = 0;
  gsize cut = 0;

  g_test_summary ("Without a newline near them both cuts fall between "
                  "characters, never inside one");

  for (guint i = 0; i < 12; i++)
    g_string_append (text, "é");
  _terret_head_tail_capture_append (capture, (const guint8 *) text->str, text->len);
  bytes = _terret_head_tail_capture_finish (capture, &dropped, &cut);

  /* Head of 5 bytes backs off to 4 ("éé"); tail of 6 starts on a lead. */
  terret_test_assert_bytes_str (bytes, "ééééé");
  g_assert_cmpuint (cut, ==, 4);
  g_assert_cmpuint (dropped, ==, 24 - 10);
  g_assert_true (g_utf8_validate (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), NULL));
}

static void
test_head_tail_large_append (void)
{
  g_autoptr(GByteArray) input = g_byte_array_new ();

  g_test_summary ("One append far longer than the limit keeps its first and "
                  "last bytes and stays within the bound");

  random_stream (input, 5000);
  head_tail_check (input->data, input->len, 64, input->len);
  head_tail_check (input->data, input->len, 64, 1000);
  head_tail_check (input->data, input->len, 0, 1000);
}

static void
test_stream_capture_modes (void)
{
  static const char lines[] = "one\ntwo\nthree\nfour\nfive\nsix\n";
  const TerretCaptureMode modes[] = {
    TERRET_CAPTURE_MODE_HEAD, TERRET_CAPTURE_MODE_TAIL, TERRET_CAPTURE_MODE_HEAD_TAIL,
  };
  /* A tail holds its overshoot (at least 4 KiB) before it evicts. */
  const char *kept[] = { "one\ntwo\nthree\nfour", lines, "one\ntwo\nfive\nsix\n" };
  const gsize cuts[] = { 18, sizeof lines - 1, 8 };

  g_test_summary ("The stream capture keeps what each mode says, with the "
                  "cut where the omitted bytes were");

  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      g_autoptr(TerretStreamCapture) capture = _terret_stream_capture_new (modes[i], 18);
      g_autoptr(GBytes) bytes = NULL;
      guint64 dropped = 0;
      gsize cut = 99;

      g_assert_cmpint (_terret_stream_capture_get_mode (capture), ==, modes[i]);
      _terret_stream_capture_append (capture, (const guint8 *) lines, strlen (lines));
      g_assert_cmpuint (_terret_stream_capture_get_seen (capture), ==, strlen (lines));
      bytes = _terret_stream_capture_finish (capture, FALSE, &dropped, &cut);
      terret_test_assert_bytes_str (bytes, kept[i]);
      g_assert_cmpuint (dropped + g_bytes_get_size (bytes), ==, strlen (lines));
      g_assert_cmpuint (cut, ==, cuts[i]);
    }
}

/* A stream with error lines planted among filler: one straddling a
 * head-tail's head, twelve in the middle, one in the last bytes. */
static GString *
planted_stream (GArray *offsets)
{
  GString *text = g_string_new (NULL);
  guint64 at;

  for (guint i = 0; i < 18; i++)
    g_string_append_printf (text, "line %04u\n", i);
  g_string_append (text, "xxxx\n");
  at = text->len;
  g_array_append_val (offsets, at);
  g_string_append (text, "error: straddles the head\n");
  for (guint e = 0; e < 12; e++)
    {
      for (guint i = 0; i < 40; i++)
        g_string_append_printf (text, "line %04u\n", 100 + e * 40 + i);
      at = text->len;
      g_array_append_val (offsets, at);
      g_string_append_printf (text, "src/f%u.c:%u:1: error: planted\n", e, e + 1);
    }
  for (guint i = 0; i < 40; i++)
    g_string_append_printf (text, "line %04u\n", 900 + i);
  at = text->len;
  g_array_append_val (offsets, at);
  g_string_append (text, "FAILED at the end\nline 9999\n");
  return text;
}

static void
test_stream_capture_omitted_errors (void)
{
  const TerretCaptureMode modes[] = {
    TERRET_CAPTURE_MODE_HEAD, TERRET_CAPTURE_MODE_TAIL, TERRET_CAPTURE_MODE_HEAD_TAIL,
  };
  const gsize chunks[] = { 1, 2, 3, 7, 64, 4096 };
  const gsize limits[] = { 400, 1000 };
  g_autoptr(GArray) offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GString) text = planted_stream (offsets);

  g_test_summary ("The stream capture counts the omitted lines and keeps the first ten planted "
                  "error lines among them, at their offsets, however the stream is chunked");

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    for (guint l = 0; l < G_N_ELEMENTS (limits); l++)
      for (guint c = 0; c < G_N_ELEMENTS (chunks); c++)
        {
          g_autoptr(TerretStreamCapture) capture = _terret_stream_capture_new (modes[m], limits[l]);
          g_autoptr(TerretResult) result = terret_result_new ();
          g_autoptr(GBytes) bytes = NULL;
          GPtrArray *lines;
          guint64 dropped = 0, newlines = 0;
          gsize cut = 0;
          guint expected = 0;

          for (gsize i = 0; i < text->len; i += chunks[c])
            _terret_stream_capture_append (capture, (const guint8 *) text->str + i,
                                           MIN (chunks[c], text->len - i));
          bytes = _terret_stream_capture_finish (capture, FALSE, &dropped, &cut);
          g_assert_cmpuint (dropped, >, 0);
          _terret_result_report_omitted (result, TERRET_STREAM_STDOUT, capture, 1000);

          for (gsize i = cut; i < cut + dropped; i++)
            newlines += text->str[i] == '\n';
          g_assert_cmpuint (terret_result_get_omitted_lines (result, TERRET_STREAM_STDOUT), ==, newlines);

          lines = terret_result_get_omitted_errors (result, TERRET_STREAM_STDOUT);
          g_assert_nonnull (lines);
          for (guint i = 0; i < offsets->len && expected < 10; i++)
            {
              guint64 at = g_array_index (offsets, guint64, i);
              TerretOutputLine *line;
              const char *end;

              if (at < cut || at >= cut + dropped)
                continue;
              g_assert_cmpuint (expected, <, lines->len);
              line = g_ptr_array_index (lines, expected);
              /* Offsets count from the base a poll's stretch gives. */
              g_assert_cmpuint (terret_output_line_get_offset (line), ==, 1000 + at);
              end = strchr (text->str + at, '\n');
              terret_test_assert_bytes_eq (terret_output_line_get_text (line), text->str + at,
                                           end - (text->str + at));
              expected++;
            }
          g_assert_cmpuint (lines->len, ==, expected);
        }
}

/* The spool ------------------------------------------------------------ */

/* Writes of every size, small ones gathered and large ones direct, in any
 * order, with the bound falling inside a gathered stretch: the file holds
 * exactly the stream's first max bytes, in order, and counts the rest. */
static void
test_spool_writes (void)
{
  static const gsize sizes[] = { 1, 4096, 40000, 3, 70000, 4096, 4096, 32768, 65536, 17, 100000 };
  g_autofree char *dir = g_dir_make_tmp ("test-spool-XXXXXX", NULL);
  g_autoptr(GByteArray) stream = g_byte_array_new ();
  g_autofree char *contents = NULL;
  gsize length = 0;
  guint32 state = 1;

  g_assert_nonnull (dir);

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (gsize j = 0; j < sizes[i]; j++)
      {
        guint8 byte;

        state = state * 1103515245 + 12345;
        byte = state >> 16;
        g_byte_array_append (stream, &byte, 1);
      }

  for (guint64 max = 0; max <= stream->len; max += stream->len / 7 + 1)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretSpool) spool = _terret_spool_new (dir, ".out", max, &error);
      gsize offset = 0;

      g_assert_no_error (error);
      for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
        {
          _terret_spool_write (spool, stream->data + offset, sizes[i]);
          offset += sizes[i];
        }
      _terret_spool_close (spool);

      g_assert_cmpuint (_terret_spool_get_seen (spool), ==, stream->len);
      g_assert_true (g_file_get_contents (_terret_spool_get_path (spool), &contents, &length, NULL));
      g_assert_cmpmem (contents, length, stream->data, MIN (max, stream->len));
      g_clear_pointer (&contents, g_free);
      _terret_spool_remove (spool);
    }

  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/capture/utf8/prefix-cases", test_utf8_prefix_cases);
  g_test_add_func ("/capture/utf8/suffix-cases", test_utf8_suffix_cases);
  g_test_add_func ("/capture/utf8/every-character", test_utf8_every_character);
  g_test_add_func ("/capture/utf8/exhaustive-bytes", test_utf8_exhaustive_bytes);
  g_test_add_func ("/capture/utf8/random-valid", test_utf8_random_valid);
  g_test_add_func ("/capture/head/every-chunking", test_head_every_chunking);
  g_test_add_func ("/capture/head/random", test_head_random);
  g_test_add_func ("/capture/head/marker-straddles-limit", test_head_marker_straddles_limit);
  g_test_add_func ("/capture/head/marker-far-past-limit", test_head_marker_far_past_limit);
  g_test_add_func ("/capture/head/utf8-cut", test_head_utf8_cut);
  g_test_add_func ("/capture/head/partial", test_head_partial);
  g_test_add_func ("/capture/head/large-append", test_head_large_append);
  g_test_add_func ("/capture/head/limit-zero", test_head_limit_zero);
  g_test_add_func ("/capture/head/spent", test_head_spent);
  g_test_add_func ("/capture/head/end-past-seen", test_head_end_past_seen);
  g_test_add_func ("/capture/head/boxed-type", test_head_boxed_type);
  g_test_add_func ("/capture/tail/random", test_tail_random);
  g_test_add_func ("/capture/tail/newline-aligned", test_tail_newline_aligned);
  g_test_add_func ("/capture/tail/long-line", test_tail_long_line);
  g_test_add_func ("/capture/tail/utf8-without-newline", test_tail_utf8_without_newline);
  g_test_add_func ("/capture/tail/large-append", test_tail_large_append);
  g_test_add_func ("/capture/tail/spent", test_tail_spent);
  g_test_add_func ("/capture/tail/boxed-type", test_tail_boxed_type);
  g_test_add_func ("/capture/tail/seq", test_tail_seq);
  g_test_add_func ("/capture/head-tail/every-chunking", test_head_tail_every_chunking);
  g_test_add_func ("/capture/head-tail/random", test_head_tail_random);
  g_test_add_func ("/capture/head-tail/lines", test_head_tail_lines);
  g_test_add_func ("/capture/head-tail/utf8", test_head_tail_utf8);
  g_test_add_func ("/capture/head-tail/large-append", test_head_tail_large_append);
  g_test_add_func ("/capture/stream/modes", test_stream_capture_modes);
  g_test_add_func ("/capture/stream/omitted-errors", test_stream_capture_omitted_errors);
  g_test_add_func ("/capture/spool/writes", test_spool_writes);

  return g_test_run ();
}
