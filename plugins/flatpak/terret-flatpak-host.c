/* terret-flatpak-host.c: a Flatpak app's host, through the session helper
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Inside a Flatpak, the session helper's org.freedesktop.Flatpak.Development
 * interface runs a command on the host (`HostCommand`): an argument
 * vector, a directory, descriptors passed with the call, an environment
 * over the helper's own, and flags. It is how `flatpak-spawn --host`
 * works, and what an app reaches with `--talk-name=org.freedesktop.Flatpak`.
 *
 * Here it starts one thing: terret-exec's own launcher, on the host,
 * with one end of a socket pair as its descriptor 3 (TerretFarSide's
 * terret_far_side_new_for_socket()). From then on the library hands it
 * spawn requests with their descriptors, as to a launcher of its own
 * host, and every process runs under a unit of that launcher: contained,
 * limited, stopped, detached as locally. The launcher's program is the
 * static build the app ships (terret_far_side_get_launcher()), which
 * needs nothing of the host's C library, at its place on the host: the
 * app's files are mounted at its prefix (`/app`) in the sandbox and come
 * from `/.flatpak-info`'s `[Instance] app-path` on the host.
 *
 * Nothing outlives the app: the launcher leaves when its socket closes
 * (the app went, however), and each unit ends everything it contains
 * when its own socket does; and the call asks for watch-bus, so the
 * helper kills the launcher when the app's bus connection goes.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

#include "terret-flatpak-host.h"

#define FLATPAK_INFO "/.flatpak-info"
#define PORTAL_NAME "org.freedesktop.Flatpak"
#define PORTAL_PATH "/org/freedesktop/Flatpak/Development"
#define PORTAL_IFACE "org.freedesktop.Flatpak.Development"
/* FLATPAK_HOST_COMMAND_FLAGS_WATCH_BUS: the helper kills the command
 * when the caller's bus connection goes away. */
#define HOST_COMMAND_FLAGS_WATCH_BUS (1u << 1)

struct _TerretFlatpakHost
{
  gatomicrefcount ref_count;

  GMutex mutex;
  GDBusConnection *bus;         /* (owned) (nullable) until checked */
  char *app_path;               /* (owned) (nullable) */
  char *launcher;               /* (owned) (nullable) its path on the host */
};

TerretFlatpakHost *
terret_flatpak_host_new (void)
{
  TerretFlatpakHost *self = g_new0 (TerretFlatpakHost, 1);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->mutex);
  return self;
}

TerretFlatpakHost *
terret_flatpak_host_ref (TerretFlatpakHost *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
terret_flatpak_host_unref (TerretFlatpakHost *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_clear_object (&self->bus);
  g_free (self->app_path);
  g_free (self->launcher);
  g_mutex_clear (&self->mutex);
  g_free (self);
}

/* The launcher's path on the host: app-path, and the launcher's path
 * here below the prefix the app's files are at (the SDK's: `/app` in a
 * Flatpak). */
static char *
host_launcher (const char  *app_path,
               GError     **error)
{
  const char *launcher = terret_far_side_get_launcher ();
  g_autofree char *prefix = g_canonicalize_filename (TERRET_FLATPAK_PREFIX, "/");
  gsize len = strcmp (prefix, "/") == 0 ? 0 : strlen (prefix);

  if (!g_file_test (launcher, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "the launcher for the host, %s, is not there (a build of terret-exec "
                   "that could not link it statically has none)", launcher);
      return NULL;
    }
  if (strncmp (launcher, prefix, len) != 0 || launcher[len] != '/')
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "the launcher %s is not below the app's prefix %s, so where it is on the "
                   "host cannot be told from the app's files there (%s)", launcher, prefix,
                   app_path);
      return NULL;
    }
  return g_build_filename (app_path, launcher + len, NULL);
}

/* A call's failure in words an operator can act on. */
static void
set_portal_error (GError     **error,
                  GError      *dbus_error,
                  const char  *doing)
{
  g_autofree char *words = NULL;
  const char *hint = "";

  if (g_error_matches (dbus_error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) ||
      g_error_matches (dbus_error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
    hint = " (" PORTAL_NAME " is not on the app's session bus: the app needs "
           "--talk-name=" PORTAL_NAME " in its finish-args, and the host the Flatpak "
           "session helper)";
  else if (g_error_matches (dbus_error, G_DBUS_ERROR, G_DBUS_ERROR_ACCESS_DENIED))
    hint = " (the app may not talk to " PORTAL_NAME ": it needs --talk-name="
           PORTAL_NAME " in its finish-args)";
  if (g_dbus_error_is_remote_error (dbus_error))
    g_dbus_error_strip_remote_error (dbus_error);
  words = g_strdup (dbus_error->message);
  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE, "%s: %s%s", doing, words,
               hint);
}

/* Whether this is a Flatpak app whose host can be reached: its
 * /.flatpak-info, the launcher at its place, and the session helper
 * answering on the session bus. */
gboolean
terret_flatpak_host_check (TerretFlatpakHost  *self,
                           GCancellable       *cancellable,
                           GError            **error)
{
  g_autoptr(GKeyFile) info = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autofree char *app_path = NULL;
  g_autofree char *launcher = NULL;

  if (!g_key_file_load_from_file (info, FLATPAK_INFO, G_KEY_FILE_NONE, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                             "not inside a Flatpak (there is no " FLATPAK_INFO "): flatpak-host "
                             "runs commands on a Flatpak app's host");
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                     "could not read " FLATPAK_INFO ": %s", local_error->message);
      return FALSE;
    }
  app_path = g_key_file_get_string (info, "Instance", "app-path", NULL);
  if (app_path == NULL || !g_path_is_absolute (app_path))
    {
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                           FLATPAK_INFO " says nothing of where the app's files are on the host "
                           "([Instance] app-path)");
      return FALSE;
    }
  if ((launcher = host_launcher (app_path, error)) == NULL)
    return FALSE;

  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, cancellable, &local_error);
  if (bus == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "the session bus cannot be reached: %s", local_error->message);
      return FALSE;
    }
  /* Activated if need be: a desktop starts the helper on demand. */
  reply = g_dbus_connection_call_sync (bus, PORTAL_NAME, PORTAL_PATH,
                                       "org.freedesktop.DBus.Properties", "Get",
                                       g_variant_new ("(ss)", PORTAL_IFACE, "version"),
                                       G_VARIANT_TYPE ("(v)"), G_DBUS_CALL_FLAGS_NONE,
                                       -1, cancellable, &local_error);
  if (reply == NULL)
    {
      set_portal_error (error, local_error, "the Flatpak session helper does not answer");
      return FALSE;
    }

  g_mutex_lock (&self->mutex);
  g_set_object (&self->bus, bus);
  g_free (self->app_path);
  self->app_path = g_steal_pointer (&app_path);
  g_free (self->launcher);
  self->launcher = g_steal_pointer (&launcher);
  g_mutex_unlock (&self->mutex);
  return TRUE;
}

static void
add_fd (GVariantBuilder  *map,
        GUnixFDList      *list,
        guint             target,
        int               fd)
{
  /* The list holds a copy until the call is sent. */
  int handle = g_unix_fd_list_append (list, fd, NULL);

  g_variant_builder_add (map, "{uh}", target, handle);
}

/* TerretFarSideStartFunc: `HostCommand` with the launcher's path on the
 * host and its arguments, the socket as descriptor 3. */
static gboolean
start_launcher (TerretFarSide       *far_side,
                const char * const  *argv,
                int                  socket_fd,
                int                  output_fd,
                gpointer             user_data,
                GError             **error)
{
  TerretFlatpakHost *self = user_data;
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *launcher = NULL;
  g_autofree char *app_path = NULL;
  GVariantBuilder args, map;
  int null_fd;

  g_mutex_lock (&self->mutex);
  bus = self->bus != NULL ? g_object_ref (self->bus) : NULL;
  launcher = g_strdup (self->launcher);
  app_path = g_strdup (self->app_path);
  g_mutex_unlock (&self->mutex);
  g_return_val_if_fail (bus != NULL, FALSE);

  null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "Could not open /dev/null: %s", g_strerror (saved_errno));
      return FALSE;
    }

  g_variant_builder_init (&args, G_VARIANT_TYPE ("aay"));
  g_variant_builder_add (&args, "^ay", launcher);
  for (guint i = 0; argv[i] != NULL; i++)
    g_variant_builder_add (&args, "^ay", argv[i]);
  g_variant_builder_init (&map, G_VARIANT_TYPE ("a{uh}"));
  add_fd (&map, fds, 0, null_fd);
  add_fd (&map, fds, 1, output_fd);
  add_fd (&map, fds, 2, output_fd);
  add_fd (&map, fds, 3, socket_fd);
  close (null_fd);

  /* The launcher starts in the home directory, the same path on the
   * host; every process starts where its request says. The helper's
   * environment is the launcher's, to which each request's is added. */
  reply = g_dbus_connection_call_with_unix_fd_list_sync (
    bus, PORTAL_NAME, PORTAL_PATH, PORTAL_IFACE, "HostCommand",
    g_variant_new ("(^ayaaya{uh}a{ss}u)", g_get_home_dir (), &args, &map, NULL,
                   HOST_COMMAND_FLAGS_WATCH_BUS),
    G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, fds, NULL, NULL,
    &local_error);
  if (reply == NULL)
    {
      g_autofree char *doing = g_strdup_printf ("Could not start the launcher on the host "
                                                "(%s, from the app's files at %s)",
                                                launcher, app_path);

      set_portal_error (error, local_error, doing);
      return FALSE;
    }
  return TRUE;
}

/* The host as the engines' far side: one launcher per executor. */
TerretFarSide *
terret_flatpak_host_far_side (TerretFlatpakHost  *self,
                              GError            **error)
{
  return terret_far_side_new_for_socket ("the host (flatpak-host)", start_launcher,
                                         terret_flatpak_host_ref (self),
                                         (GDestroyNotify)terret_flatpak_host_unref);
}

char *
terret_flatpak_host_describe (TerretFlatpakHost *self)
{
  g_autofree char *launcher = NULL;

  g_mutex_lock (&self->mutex);
  launcher = g_strdup (self->launcher);
  g_mutex_unlock (&self->mutex);
  return g_strdup_printf ("on the Flatpak app's host, through the session helper (%s): every "
                          "process under a unit of the launcher %s there, a child subreaper "
                          "that ends everything the process started with its session or run, "
                          "and when the app goes (its socket closes, and the helper watches "
                          "the app's bus connection); host process ids, which name nothing "
                          "in the app", PORTAL_NAME,
                          launcher != NULL ? launcher
                          : "(the app's terret-launcher-static, from its files on the host)");
}
