/* terret-spool.c: every byte of a run's output, in a file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "terret-error.h"
#include "terret-spool-private.h"

/* Reads are gathered up to this before they are written, so the spool
 * costs one write per this many bytes rather than one per read: a pipe
 * read is often a page (4 KiB), and a file write per page cost a oneshot
 * run with the spool on four fifths of its throughput. A read at least
 * SPOOL_DIRECT long that finds nothing gathered goes out as it is. */
#define SPOOL_BUFFER (64 * 1024)
#define SPOOL_DIRECT (32 * 1024)

enum
{
  SPOOL_KEPT,                   /* the executor removes it when the session closes */
  SPOOL_TAKEN,                  /* the caller owns it */
  SPOOL_REMOVED,
};

struct _TerretSpool
{
  gatomicrefcount ref_count;
  char *path;                   /* (owned) */
  int fd;                       /* -1 once closed */
  gint state;                   /* atomic: SPOOL_KEPT, _TAKEN, _REMOVED */
  guint64 max;
  guint64 seen;                 /* bytes of output given to the spool */
  guint64 written;              /* ... and in the file, or in @buffer on their way */
  guint8 *buffer;               /* (owned) (nullable) */
  gsize buffered;
  int error;                    /* the errno that stopped writing, or 0 */
};

static gboolean
ensure_private_dir (const char  *dir,
                    gboolean     check,
                    GError     **error)
{
  struct stat st;

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Could not create the full-output directory “%s”: %s", dir,
                   g_strerror (saved));
      return FALSE;
    }

  if (!check)
    return TRUE;

  /* A directory another user made first under a shared /tmp, or a
   * symbolic link there, would hand them the output. */
  if (lstat (dir, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid () ||
      (st.st_mode & 077) != 0)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "The full-output directory “%s” is not a private directory of this user "
                   "(mode 0700); set full-output-dir to one", dir);
      return FALSE;
    }

  return TRUE;
}

/*
 * _terret_spool_default_dir:
 *
 * Where spools go when the full-output-dir setting is unset:
 * `terret-exec` in the user's runtime directory ($XDG_RUNTIME_DIR, a tmpfs
 * of the user's own), or without one, `terret-exec-UID` in the temporary
 * directory.
 */
char *
_terret_spool_default_dir (void)
{
  /* GLib's runtime directory is $XDG_RUNTIME_DIR (or a test's isolated
   * one); without either it falls back to the cache directory, which is
   * no tmpfs and outlives the session, so that case goes to /tmp. */
  const char *runtime = g_get_user_runtime_dir ();

  if (runtime != NULL && *runtime != '\0' && g_strcmp0 (runtime, g_get_user_cache_dir ()) != 0)
    return g_build_filename (runtime, "terret-exec", NULL);

  {
    g_autofree char *name = g_strdup_printf ("terret-exec-%u", (guint) getuid ());

    return g_build_filename (g_get_tmp_dir (), name, NULL);
  }
}

/*
 * _terret_spool_new:
 * @dir: (nullable): the directory, or %NULL for the default one
 * @suffix: what ends the file's name, such as `.stdout`
 * @max: how many bytes the file may hold; more are counted, not written
 *
 * Creates the file, 0600, with a name no other run has. The default
 * directory is created 0700 and must be this user's alone; a @dir given
 * is created 0700 when it does not exist.
 */
TerretSpool *
_terret_spool_new (const char  *dir,
                   const char  *suffix,
                   guint64      max,
                   GError     **error)
{
  g_autofree char *default_dir = NULL;
  g_autofree char *tmpl = NULL;
  TerretSpool *spool;
  int fd;

  if (dir == NULL || *dir == '\0')
    dir = default_dir = _terret_spool_default_dir ();

  if (!ensure_private_dir (dir, default_dir != NULL, error))
    return NULL;

  tmpl = g_strdup_printf ("%s/full-output-XXXXXX%s", dir, suffix);
  fd = g_mkstemp_full (tmpl, O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Could not create a full-output file in “%s”: %s", dir, g_strerror (saved));
      return NULL;
    }

  spool = g_new0 (TerretSpool, 1);
  g_atomic_ref_count_init (&spool->ref_count);
  spool->path = g_steal_pointer (&tmpl);
  spool->fd = fd;
  spool->state = SPOOL_KEPT;
  spool->max = max;

  return spool;
}

TerretSpool *
_terret_spool_ref (TerretSpool *spool)
{
  g_atomic_ref_count_inc (&spool->ref_count);
  return spool;
}

void
_terret_spool_unref (TerretSpool *spool)
{
  if (!g_atomic_ref_count_dec (&spool->ref_count))
    return;

  _terret_spool_close (spool);
  g_free (spool->path);
  g_free (spool);
}

static void
spool_write_out (TerretSpool  *spool,
                 const guint8 *data,
                 gsize         len)
{
  while (len > 0 && spool->error == 0)
    {
      gssize n = write (spool->fd, data, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          spool->error = n < 0 ? errno : ENOSPC;
          break;
        }
      data += n;
      len -= n;
    }
}

void
_terret_spool_flush (TerretSpool *spool)
{
  if (spool->fd >= 0 && spool->buffered > 0)
    spool_write_out (spool, spool->buffer, spool->buffered);
  spool->buffered = 0;
}

/* Appends the stream's next bytes: past the file's bound, or once
 * writing failed, they are only counted. */
void
_terret_spool_write (TerretSpool  *spool,
                     const guint8 *data,
                     gsize         len)
{
  guint64 room;
  gsize take;

  spool->seen += len;
  if (spool->fd < 0 || spool->error != 0 || spool->written >= spool->max)
    return;

  room = spool->max - spool->written;
  take = (gsize) MIN ((guint64) len, room);
  spool->written += take;

  while (take > 0)
    {
      gsize n;

      /* Copying a large read into the buffer would cost more than the
       * write it saves. */
      if (spool->buffered == 0 && take >= SPOOL_DIRECT)
        {
          spool_write_out (spool, data, take);
          return;
        }
      if (spool->buffer == NULL)
        spool->buffer = g_malloc (SPOOL_BUFFER);
      n = MIN (take, SPOOL_BUFFER - spool->buffered);
      memcpy (spool->buffer + spool->buffered, data, n);
      spool->buffered += n;
      data += n;
      take -= n;
      if (spool->buffered == SPOOL_BUFFER)
        _terret_spool_flush (spool);
    }
}

/* Flushes and closes the file: the run is over. */
void
_terret_spool_close (TerretSpool *spool)
{
  if (spool->fd < 0)
    return;

  _terret_spool_flush (spool);
  g_clear_pointer (&spool->buffer, g_free);
  g_close (spool->fd, NULL);
  spool->fd = -1;
}

/* Takes back the last bytes written: bash's own "exit" that the result
 * leaves out too. Only while the file holds every byte. */
void
_terret_spool_truncate (TerretSpool *spool,
                        guint64      length)
{
  if (spool->fd < 0 || spool->error != 0 || spool->written != spool->seen ||
      length > spool->written)
    return;

  _terret_spool_flush (spool);
  if (ftruncate (spool->fd, length) == 0 && lseek (spool->fd, length, SEEK_SET) >= 0)
    spool->seen = spool->written = length;
}

const char *
_terret_spool_get_path (TerretSpool *spool)
{
  return spool->path;
}

guint64
_terret_spool_get_seen (TerretSpool *spool)
{
  return spool->seen;
}

/* A sentence for the notice when the file does not hold the whole
 * stream, or NULL. */
char *
_terret_spool_describe (TerretSpool *spool,
                        const char  *stream_name)
{
  guint64 missing;

  if (spool->error != 0)
    return g_strdup_printf ("The full %s could not all be written to %s (%s).", stream_name,
                            spool->path, g_strerror (spool->error));

  missing = spool->seen - spool->written;
  if (missing == 0)
    return NULL;

  return g_strdup_printf ("The full-output file %s holds the first %" G_GUINT64_FORMAT " bytes of "
                          "%s (full-output-max); %" G_GUINT64_FORMAT " more were not written.",
                          spool->path, spool->written, stream_name, missing);
}

/* The caller takes the file: it is no longer removed. Returns its path,
 * or NULL when it was taken or removed already. */
char *
_terret_spool_take (TerretSpool *spool)
{
  if (!g_atomic_int_compare_and_exchange (&spool->state, SPOOL_KEPT, SPOOL_TAKEN))
    return NULL;
  return g_strdup (spool->path);
}

/* Removes the file unless the caller took it. A run still writing goes
 * on writing to the removed file, which goes with its descriptor. */
void
_terret_spool_remove (TerretSpool *spool)
{
  if (g_atomic_int_compare_and_exchange (&spool->state, SPOOL_KEPT, SPOOL_REMOVED))
    g_unlink (spool->path);
}

/* --- Lists --------------------------------------------------------------- */

void
_terret_spool_list_init (TerretSpoolList *list)
{
  g_mutex_init (&list->mutex);
  list->spools = g_ptr_array_new_with_free_func ((GDestroyNotify) _terret_spool_unref);
}

void
_terret_spool_list_clear (TerretSpoolList *list)
{
  _terret_spool_list_remove_all (list);
  g_clear_pointer (&list->spools, g_ptr_array_unref);
  g_mutex_clear (&list->mutex);
}

void
_terret_spool_list_add (TerretSpoolList *list,
                        TerretSpool     *spool)
{
  g_mutex_lock (&list->mutex);
  g_ptr_array_add (list->spools, _terret_spool_ref (spool));
  g_mutex_unlock (&list->mutex);
}

void
_terret_spool_list_remove_all (TerretSpoolList *list)
{
  g_autoptr(GPtrArray) spools = NULL;

  g_mutex_lock (&list->mutex);
  spools = g_steal_pointer (&list->spools);
  list->spools = g_ptr_array_new_with_free_func ((GDestroyNotify) _terret_spool_unref);
  g_mutex_unlock (&list->mutex);

  for (guint i = 0; i < spools->len; i++)
    _terret_spool_remove (g_ptr_array_index (spools, i));
}
