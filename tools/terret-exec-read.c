/* terret-exec-read.c: the full-output files a server handed out, and
 * reading them (`read`, `bash_output`)
 *
 * A run with keep_full_output leaves every byte of its output in a file
 * whose path its result names. The server remembers, per session, the
 * files of the last runs it answered, so a client reads a run's middle
 * by its session (the last run there) or by the path it was given, and
 * never any other file: `read` is no way around what the server is for.
 * Where every run keeps its full output (mcp), a file whose run has
 * ended is the server's own (taken from the session), so it lives as
 * long as the server remembers it: the last KEEP_PER_SESSION runs of a
 * session, until the session closes or the server ends.
 *
 * A read is a byte range, a line range, or the lines a GRegex matches,
 * each with its line number and offset; the answer is bounded (READ_MAX
 * bytes of output) and says where to go on when it was cut. It reads in
 * a worker thread: a file may be large, and the server's loop must not
 * wait on the disk. Memory stays bounded whatever the file holds: lines
 * are read in chunks, and a line longer than LINE_KEEP is matched and
 * shown by its start.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "terret-exec-common.h"
#include "terret-exec-json-bytes.h"
#include "terret-exec-read.h"

/* Bytes of output a read answers with at most. */
#define READ_MAX (64 * 1024)

/* Matches a read answers with at most. */
#define MATCHES_MAX 1000

/* Bytes of a line kept to match it against a pattern. */
#define LINE_KEEP (64 * 1024)

/* Bytes of a matching line shown. */
#define MATCH_SHOWN 2048

/* Runs per session whose files the server keeps. */
#define KEEP_PER_SESSION 16

#define CHUNK (64 * 1024)

/* Full-output files ---------------------------------------------------- */

/* One run's files, stdout's and stderr's (either may be NULL). */
typedef struct
{
  char *path[2];                /* (owned) (nullable) */
  gboolean owned;               /* taken: the server removes them */
} RunFiles;

struct _CliOutputs
{
  GHashTable *sessions;         /* (owned) session → GQueue of RunFiles, newest first */
  gboolean take;                /* the server owns the files of runs that ended */
};

static void
run_files_free (RunFiles *files)
{
  for (guint i = 0; i < G_N_ELEMENTS (files->path); i++)
    {
      if (files->owned && files->path[i] != NULL)
        g_unlink (files->path[i]);
      g_free (files->path[i]);
    }
  g_free (files);
}

static void
run_queue_free (GQueue *queue)
{
  g_queue_free_full (queue, (GDestroyNotify) run_files_free);
}

/*
 * cli_outputs_new:
 * @take: whether the server takes the files of runs that ended, keeping
 *   KEEP_PER_SESSION of them per session (where every run keeps its full
 *   output, as mcp's do, so the files do not pile up for as long as the
 *   session lives); else they stay the session's, as the library has it
 */
CliOutputs *
cli_outputs_new (gboolean take)
{
  CliOutputs *outputs = g_new0 (CliOutputs, 1);

  outputs->take = take;
  outputs->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) run_queue_free);
  return outputs;
}

/* Removes every file the server took. */
void
cli_outputs_free (CliOutputs *outputs)
{
  g_hash_table_unref (outputs->sessions);
  g_free (outputs);
}

/*
 * cli_outputs_record:
 *
 * The last run answered in @session left @result. A result of a command
 * that ended hands its files to the server (a detached command's file
 * is still being written, and stays the session's until it ends); a
 * result without them is remembered too, so a read of that session says
 * the run kept none rather than reading an older run's.
 */
void
cli_outputs_record (CliOutputs   *outputs,
                    const char   *session,
                    TerretResult *result)
{
  GQueue *queue = g_hash_table_lookup (outputs->sessions, session);
  RunFiles *files = g_new0 (RunFiles, 1);
  RunFiles *last;
  gboolean running = terret_result_get_running (result);

  if (queue == NULL)
    {
      queue = g_queue_new ();
      g_hash_table_insert (outputs->sessions, g_strdup (session), queue);
    }

  for (TerretStream stream = TERRET_STREAM_STDOUT; stream <= TERRET_STREAM_STDERR; stream++)
    {
      if (outputs->take && !running)
        files->path[stream] = terret_result_steal_full_output (result, stream);
      if (files->path[stream] != NULL)
        files->owned = TRUE;
      else
        files->path[stream] = g_strdup (terret_result_get_full_output (result, stream));
    }

  /* A poll's result is the same run's file as the one before it. */
  last = g_queue_peek_head (queue);
  if (last != NULL && files->path[0] != NULL && g_strcmp0 (last->path[0], files->path[0]) == 0)
    {
      files->owned = files->owned || last->owned;
      last->owned = FALSE;
      run_files_free (g_queue_pop_head (queue));
    }

  g_queue_push_head (queue, files);
  while (queue->length > KEEP_PER_SESSION)
    run_files_free (g_queue_pop_tail (queue));
}

void
cli_outputs_forget_session (CliOutputs *outputs,
                            const char *session)
{
  g_hash_table_remove (outputs->sessions, session);
}

void
cli_outputs_forget_all (CliOutputs *outputs)
{
  g_hash_table_remove_all (outputs->sessions);
}

/*
 * cli_outputs_resolve:
 * @path: (nullable): a full_output path a result gave
 *
 * The file a read names: @path when this server handed it out, else the
 * @stream file of the last run answered in @session. The error says why
 * there is none: a run that kept no full output above all.
 */
char *
cli_outputs_resolve (CliOutputs    *outputs,
                     const char    *session,
                     const char    *path,
                     TerretStream   stream,
                     GError       **error)
{
  const char *name = stream == TERRET_STREAM_STDOUT ? "output" : "stderr";
  GQueue *queue;
  RunFiles *last;

  if (path != NULL)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, outputs->sessions);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        for (GList *l = ((GQueue *) value)->head; l != NULL; l = l->next)
          {
            RunFiles *files = l->data;

            for (guint i = 0; i < G_N_ELEMENTS (files->path); i++)
              if (g_strcmp0 (files->path[i], path) == 0)
                return g_strdup (path);
          }

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“path”: %s is no full-output file of a run this server answered "
                   "(or its session was closed since)", path);
      return NULL;
    }

  queue = g_hash_table_lookup (outputs->sessions, session);
  last = queue != NULL ? g_queue_peek_head (queue) : NULL;
  if (last == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“session”: no run in session “%s” has answered yet: nothing to read", session);
      return NULL;
    }
  if (last->path[stream] == NULL)
    {
      if (stream == TERRET_STREAM_STDERR && last->path[TERRET_STREAM_STDOUT] != NULL)
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "“stream”: the last run in session “%s” has no separate stderr file "
                     "(the backend merges stderr into the output)", session);
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "the last run in session “%s” kept no full %s: run it with "
                     "keep_full_output to read it afterwards", session, name);
      return NULL;
    }

  return g_strdup (last->path[stream]);
}

/* Reading -------------------------------------------------------------- */

typedef struct
{
  char *path;
  CliReadRange range;
  char *pattern;                /* (owned) (nullable) range.pattern's copy */
} ReadData;

static void
read_data_free (ReadData *data)
{
  g_free (data->path);
  g_free (data->pattern);
  g_free (data);
}

/* The length of @data's longest prefix that ends on a whole character:
 * a cut this server makes never splits one. Bytes that are no UTF-8
 * are left as they are. */
static gsize
whole_prefix (const guint8 *data,
              gsize         len)
{
  gsize start = len;

  for (guint back = 0; back < 4 && start > 0; back++)
    {
      guint8 byte = data[start - 1];
      gsize need;

      start--;
      if ((byte & 0xc0) == 0x80)
        continue;
      need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return len - start < need ? start : len;
    }
  return len;
}

static void
add_int (JsonBuilder *builder,
         const char  *name,
         gint64       value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_int_value (builder, value);
}

/* A file read in chunks, line by line. */
typedef struct
{
  int fd;
  guint64 pos;                  /* the file offset of buf[0] */
  guint8 *buf;
  gsize len;
  gsize at;
  gboolean eof;
} LineReader;

/*
 * Reads the next line: its offset, its length in the file (newline
 * included), and its first LINE_KEEP bytes (newline excluded) in @line.
 * FALSE at the end of the file.
 */
static gboolean
next_line (LineReader  *reader,
           GByteArray  *line,
           guint64     *offset,
           guint64     *file_len,
           GError     **error)
{
  gboolean any = FALSE;

  g_byte_array_set_size (line, 0);
  *offset = reader->pos + reader->at;
  *file_len = 0;

  for (;;)
    {
      const guint8 *newline;
      gsize n;

      if (reader->at == reader->len)
        {
          gssize got;

          if (reader->eof)
            return any;
          reader->pos += reader->len;
          reader->len = reader->at = 0;
          do
            got = read (reader->fd, reader->buf, CHUNK);
          while (got < 0 && errno == EINTR);
          if (got < 0)
            {
              int saved = errno;

              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                           "cannot read the full-output file: %s", g_strerror (saved));
              return FALSE;
            }
          if (got == 0)
            {
              reader->eof = TRUE;
              return any;
            }
          reader->len = (gsize) got;
        }

      any = TRUE;
      newline = memchr (reader->buf + reader->at, '\n', reader->len - reader->at);
      n = newline != NULL ? (gsize) (newline - (reader->buf + reader->at)) : reader->len - reader->at;
      if (line->len < LINE_KEEP)
        g_byte_array_append (line, reader->buf + reader->at, MIN (n, LINE_KEEP - line->len));
      *file_len += n;
      reader->at += n;
      if (newline != NULL)
        {
          reader->at++;
          *file_len += 1;
          return TRUE;
        }
    }
}

/* Skips to line @line (1-based) or the byte @offset; the reader then
 * stands at the start of that line, or at @offset. */
static gboolean
seek_start (LineReader          *reader,
            const CliReadRange  *range,
            gint64              *line_no,
            GError             **error)
{
  g_autoptr(GByteArray) line = g_byte_array_new ();
  guint64 offset, len;

  *line_no = 1;
  if (range->offset > 0)
    {
      if (lseek (reader->fd, range->offset, SEEK_SET) < 0)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cannot read the full-output file: %s", g_strerror (saved));
          return FALSE;
        }
      reader->pos = (guint64) range->offset;
      *line_no = -1;          /* unknown without reading what comes before */
      return TRUE;
    }

  while (range->line > *line_no)
    {
      if (!next_line (reader, line, &offset, &len, error))
        return error == NULL || *error == NULL;
      (*line_no)++;
    }
  return TRUE;
}

static void
read_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  ReadData *data = task_data;
  const CliReadRange *range = &data->range;
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) line = g_byte_array_new ();
  g_autofree guint8 *buf = g_malloc (CHUNK);
  LineReader reader = { .buf = buf };
  struct stat st;
  gint64 line_no = 1, first_line, lines_read = 0;
  guint64 first_offset, offset = 0, len = 0, stop;
  guint n_matches = 0;
  gboolean cut = FALSE;
  guint64 next = 0;
  gint64 next_line_no = -1;

  if (data->pattern != NULL)
    {
      /* RAW: output need not be UTF-8, and a line that is not still
       * matches by its bytes. */
      regex = g_regex_new (data->pattern, G_REGEX_RAW | G_REGEX_OPTIMIZE, 0, &error);
      if (regex == NULL)
        {
          g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                                   "“pattern”: %s", error->message);
          return;
        }
    }

  reader.fd = g_open (data->path, O_RDONLY | O_CLOEXEC, 0);
  if (reader.fd < 0 || fstat (reader.fd, &st) < 0)
    {
      int saved = errno;

      if (reader.fd >= 0)
        close (reader.fd);
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                               "cannot open the full-output file %s: %s", data->path, g_strerror (saved));
      return;
    }

  if (!seek_start (&reader, range, &line_no, &error))
    goto failed;
  first_line = line_no;
  first_offset = reader.pos + reader.at;
  stop = range->length >= 0 ? first_offset + (guint64) range->length : G_MAXUINT64;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, data->path);
  add_int (builder, "size", st.st_size);

  if (regex == NULL && range->line < 0 && range->lines < 0)
    {
      /* A byte range: the bytes as they are. */
      guint64 want = MIN (stop, (guint64) st.st_size) > first_offset
                     ? MIN (stop, (guint64) st.st_size) - first_offset : 0;
      gsize take = (gsize) MIN (want, READ_MAX);
      gssize got = 0;

      g_byte_array_set_size (out, take);
      while (take > 0 && (got = pread (reader.fd, out->data, take, first_offset)) < 0 && errno == EINTR)
        ;
      if (got < 0)
        {
          int saved = errno;

          g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cannot read the full-output file: %s", g_strerror (saved));
          goto failed;
        }
      g_byte_array_set_size (out, (guint) got);
      if (want > (guint64) got)
        {
          cut = TRUE;
          g_byte_array_set_size (out, whole_prefix (out->data, out->len));
          next = first_offset + out->len;
        }
      add_int (builder, "offset", first_offset);
      add_int (builder, "end", first_offset + out->len);
      cli_json_add_bytes (builder, "data", out->data, out->len);
    }
  else
    {
      /* Line by line: a line range, or the lines a pattern matches. */
      guint64 end = first_offset;

      if (regex != NULL)
        {
          json_builder_set_member_name (builder, "matches");
          json_builder_begin_array (builder);
        }

      for (;;)
        {
          guint64 at_offset;

          if (range->lines >= 0 && lines_read >= range->lines)
            break;
          if (reader.pos + reader.at >= stop)
            break;
          if (g_cancellable_is_cancelled (cancellable))
            break;

          at_offset = reader.pos + reader.at;
          if (!next_line (&reader, line, &offset, &len, &error))
            {
              if (error != NULL)
                goto failed;
              break;
            }

          if (regex == NULL)
            {
              /* Whole lines while they fit; a first line longer than the
               * bound comes by its start. */
              if (out->len + len > READ_MAX)
                {
                  cut = TRUE;
                  if (out->len == 0)
                    {
                      gsize shown = whole_prefix (line->data, MIN (line->len, READ_MAX));

                      g_byte_array_append (out, line->data, shown);
                      next = offset + shown;
                      end = next;
                    }
                  else
                    {
                      next = at_offset;
                      next_line_no = line_no >= 0 ? line_no : -1;
                    }
                  break;
                }
              g_byte_array_append (out, line->data, line->len);
              if (len > line->len)
                g_byte_array_append (out, (const guint8 *) "\n", 1);
              end = offset + len;
            }
          else if (g_regex_match_full (regex, (const char *) line->data, line->len, 0, 0, NULL, NULL))
            {
              gsize shown = whole_prefix (line->data, MIN (line->len, MATCH_SHOWN));

              if (n_matches == MATCHES_MAX || out->len + shown > READ_MAX)
                {
                  cut = TRUE;
                  next = at_offset;
                  next_line_no = line_no;
                  break;
                }
              g_byte_array_append (out, line->data, shown);
              json_builder_begin_object (builder);
              if (line_no >= 0)
                add_int (builder, "line", line_no);
              add_int (builder, "offset", offset);
              cli_json_add_bytes (builder, "text", line->data, shown);
              if (shown < line->len || len > line->len + 1)
                {
                  json_builder_set_member_name (builder, "text_cut");
                  json_builder_add_boolean_value (builder, TRUE);
                }
              json_builder_end_object (builder);
              n_matches++;
            }
          end = offset + len;
          lines_read++;
          if (line_no >= 0)
            line_no++;
        }

      if (regex != NULL)
        json_builder_end_array (builder);
      add_int (builder, "offset", first_offset);
      add_int (builder, "end", end);
      if (first_line >= 0)
        {
          add_int (builder, "line", first_line);
          add_int (builder, "lines_read", lines_read);
        }
      if (regex == NULL)
        cli_json_add_bytes (builder, "data", out->data, out->len);
    }

  json_builder_set_member_name (builder, "cut");
  json_builder_add_boolean_value (builder, cut);
  if (cut)
    {
      add_int (builder, "next_offset", next);
      if (next_line_no >= 0)
        add_int (builder, "next_line", next_line_no);
    }
  json_builder_end_object (builder);

  close (reader.fd);
  g_task_return_pointer (task, json_builder_get_root (builder), (GDestroyNotify) json_node_unref);
  return;

failed:
  close (reader.fd);
  g_task_return_error (task, g_steal_pointer (&error));
}

/*
 * cli_read_async:
 * @path: a file cli_outputs_resolve() gave
 * @range: what to read; its pattern is copied
 *
 * Reads @range of @path in a worker thread: the answer's members.
 */
void
cli_read_async (const char          *path,
                const CliReadRange  *range,
                GCancellable        *cancellable,
                GAsyncReadyCallback  callback,
                gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  ReadData *data = g_new0 (ReadData, 1);

  g_task_set_source_tag (task, cli_read_async);
  data->path = g_strdup (path);
  data->range = *range;
  data->pattern = g_strdup (range->pattern);
  data->range.pattern = data->pattern;
  g_task_set_task_data (task, data, (GDestroyNotify) read_data_free);
  g_task_run_in_thread (task, read_thread);
}

JsonNode *
cli_read_finish (GAsyncResult  *result,
                 GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
append_member_bytes (GString    *text,
                     JsonObject *object,
                     const char *name)
{
  g_autofree char *base64 = g_strconcat (name, "_base64", NULL);

  if (json_object_has_member (object, name))
    g_string_append (text, json_object_get_string_member (object, name));
  else if (json_object_has_member (object, base64))
    {
      gsize len = 0;
      g_autofree guchar *bytes = g_base64_decode (json_object_get_string_member (object, base64), &len);
      g_autofree char *valid = g_utf8_make_valid ((const char *) bytes, len);

      g_string_append (text, valid);
    }
}

/*
 * cli_read_text:
 *
 * A read's answer as a model reads it: the bytes, or the matching lines
 * as LINE:OFFSET: TEXT, then one bracketed line saying what was read and
 * where to go on.
 */
char *
cli_read_text (JsonObject *read)
{
  GString *text = g_string_new (NULL);
  gint64 size = json_object_get_int_member (read, "size");
  gint64 offset = json_object_get_int_member (read, "offset");
  gint64 end = json_object_get_int_member (read, "end");

  if (json_object_has_member (read, "matches"))
    {
      JsonArray *matches = json_object_get_array_member (read, "matches");

      for (guint i = 0; i < json_array_get_length (matches); i++)
        {
          JsonObject *match = json_array_get_object_element (matches, i);

          if (json_object_has_member (match, "line"))
            g_string_append_printf (text, "%" G_GINT64_FORMAT ":",
                                    json_object_get_int_member (match, "line"));
          g_string_append_printf (text, "%" G_GINT64_FORMAT ": ", json_object_get_int_member (match, "offset"));
          append_member_bytes (text, match, "text");
          g_string_append_printf (text, "%s\n", json_object_get_boolean_member_with_default (match, "text_cut", FALSE)
                                                ? " [line cut]" : "");
        }
      g_string_append_printf (text, "[%u matching lines (LINE:OFFSET: text) in bytes %" G_GINT64_FORMAT
                              "-%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
                              json_array_get_length (matches), offset, end, size);
    }
  else
    {
      append_member_bytes (text, read, "data");
      if (text->len > 0 && text->str[text->len - 1] != '\n')
        g_string_append_c (text, '\n');
      g_string_append_printf (text, "[bytes %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
                              offset, end, size);
      if (json_object_has_member (read, "line") && json_object_get_int_member (read, "lines_read") > 0)
        g_string_append_printf (text, "; lines %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT,
                                json_object_get_int_member (read, "line"),
                                json_object_get_int_member (read, "line") +
                                json_object_get_int_member (read, "lines_read") - 1);
    }

  if (json_object_get_boolean_member (read, "cut"))
    {
      g_string_append_printf (text, "; cut at %d KiB: go on with offset %" G_GINT64_FORMAT,
                              READ_MAX / 1024, json_object_get_int_member (read, "next_offset"));
      if (json_object_has_member (read, "next_line"))
        g_string_append_printf (text, " or line %" G_GINT64_FORMAT,
                                json_object_get_int_member (read, "next_line"));
    }
  g_string_append (text, "]");

  return g_string_free (text, FALSE);
}
