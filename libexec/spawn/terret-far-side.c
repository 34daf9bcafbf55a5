/* terret-far-side.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "terret-error.h"
#include "terret-far-side-private.h"
#include "terret-launcher-id.h"
#include "terret-launcher-program-private.h"

/**
 * TerretFarSide:
 *
 * Where a backend's processes run when they do not run on this host: in
 * a container, a pod. It names the command whose standard input and
 * output reach `terret-launcher --serve` there, for instance
 * `podman exec -i CONTAINER /tmp/terret-launcher-ID --serve`.
 *
 * A [class@Terret.SessionExecutor] or [class@Terret.CommandExecutor]
 * subclass returns one from its `get_far_side` virtual method, and from
 * then on every process of the executor is started by that far launcher,
 * through one connection per far side, and is contained there as it
 * would be here: it runs under a unit that is a child subreaper, so
 * everything it starts ends with its session or run, and everything ends
 * when the connection does (the host died). The engines are unchanged:
 * [class@Terret.Launcher] and [class@Terret.Process] mean the same, with
 * three differences: a program named without a slash is looked up in
 * the far side's `PATH`; the environment given is added to the far
 * side's own (the container's), never replaced by the host's; and a
 * terminal given with [method@Terret.Launcher.take_terminal] is made on
 * the far side, its bytes carried over the descriptor given, one end of
 * a socket pair (see [class@Terret.ShellChannel]). A descriptor other
 * than a terminal is carried one way: 0, and any other the process may
 * read, into the process; 1, 2 and any other opened write-only, out of
 * it.
 *
 * The launcher that runs there is [func@Terret.FarSide.get_launcher], a
 * build that needs nothing of the far side's filesystem (statically
 * linked), which a backend puts in place: bind-mounted read-only into a
 * container it starts, or copied in with the command given to
 * [method@Terret.FarSide.set_install], which is run when the far side
 * does not answer, or answers as another build; naming the copy after
 * [func@Terret.FarSide.get_launcher_id] makes a copy made once serve
 * every later connection.
 *
 * Where descriptors can be handed to the far side with the launcher's
 * socket (the host of a Flatpak app, through the session helper), a far
 * side made with [ctor@Terret.FarSide.new_for_socket] is reached without
 * a command's standard input and output in between: the backend starts
 * the launcher there itself, given one end of the socket, and from then
 * on the processes' descriptors are handed over as to a launcher on this
 * host (a terminal given is then a terminal, made here), while their
 * programs, environment and process ids are the far side's, as above.
 *
 * A far side that cannot be reached (its command fails, a container
 * stopped, an image unknown) fails the run with
 * %TERRET_EXEC_ERROR_UNAVAILABLE saying so in the words of the command
 * that failed; one that does not answer in its timeout likewise.
 *
 * Since: 0.2
 */

struct _TerretFarSide
{
  GObject parent_instance;

  char *name;                   /* (owned) */
  GStrv argv;                   /* (owned) */
  GStrv install;                /* (owned) (nullable) */
  GStrv probe;                  /* (owned) (nullable) */
  double timeout;
  /* Reached with a socket handed over: how its launcher starts. */
  TerretFarSideStartFunc start;
  gpointer start_data;
  GDestroyNotify start_destroy;
};

G_DEFINE_FINAL_TYPE (TerretFarSide, terret_far_side, G_TYPE_OBJECT)

#define DEFAULT_TIMEOUT 30.0

static void
terret_far_side_finalize (GObject *object)
{
  TerretFarSide *self = TERRET_FAR_SIDE (object);

  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->argv, g_strfreev);
  g_clear_pointer (&self->install, g_strfreev);
  g_clear_pointer (&self->probe, g_strfreev);
  if (self->start_destroy != NULL)
    g_clear_pointer (&self->start_data, self->start_destroy);

  G_OBJECT_CLASS (terret_far_side_parent_class)->finalize (object);
}

static void
terret_far_side_class_init (TerretFarSideClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = terret_far_side_finalize;
}

static void
terret_far_side_init (TerretFarSide *self)
{
  self->timeout = DEFAULT_TIMEOUT;
}

/**
 * terret_far_side_new:
 * @name: how messages name the far side, such as `container “web” (podman)`
 * @argv: (array zero-terminated=1): the command whose standard input and
 *   output reach `terret-launcher --serve` on the far side; `argv[0]` is
 *   a path or a name looked up in the host's `PATH`
 *
 * Creates a far side. Two executors' far sides with the same @name and
 * @argv are still two connections; one executor's far sides are one
 * connection per distinct @name and @argv.
 *
 * Returns: (transfer full): a new far side
 *
 * Since: 0.2
 */
TerretFarSide *
terret_far_side_new (const char         *name,
                     const char * const *argv)
{
  TerretFarSide *self;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  self = g_object_new (TERRET_TYPE_FAR_SIDE, NULL);
  self->name = g_strdup (name);
  self->argv = g_strdupv ((char **)argv);
  return self;
}

/**
 * terret_far_side_new_for_socket:
 * @name: how messages name the far side, such as `the host (flatpak-host)`
 * @start: (scope notified): starts the launcher there
 * @user_data: (closure start): data for @start
 * @destroy: (destroy start) (nullable): frees @user_data when the far
 *   side is finalized
 *
 * Creates a far side whose launcher the backend starts itself with one
 * end of a socket pair (see [callback@Terret.FarSideStartFunc]), where descriptors
 * reach it: a launcher on the host of a Flatpak app, started through the
 * session helper's `HostCommand`. What runs there is contained, limited,
 * stopped and detached as on this host; programs named without a slash
 * are looked up in the far side's `PATH`, the environment given is added
 * to the launcher's own there, and process ids are the far side's.
 * [method@Terret.FarSide.set_timeout] bounds the wait for the launcher's
 * answer once @start returned; install and probe commands have no use
 * here. One executor's far sides are one launcher per distinct @name,
 * @start and @user_data.
 *
 * Returns: (transfer full): a new far side
 *
 * Since: 0.3
 */
TerretFarSide *
terret_far_side_new_for_socket (const char             *name,
                                TerretFarSideStartFunc  start,
                                gpointer                user_data,
                                GDestroyNotify          destroy)
{
  TerretFarSide *self;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (start != NULL, NULL);

  self = g_object_new (TERRET_TYPE_FAR_SIDE, NULL);
  self->name = g_strdup (name);
  self->start = start;
  self->start_data = user_data;
  self->start_destroy = destroy;
  return self;
}

/**
 * terret_far_side_set_install:
 * @self: a far side
 * @argv: (array zero-terminated=1) (nullable): a command that puts the
 *   launcher in place on the far side, such as
 *   `podman cp LAUNCHER CONTAINER:/tmp/terret-launcher-ID`, or %NULL
 *
 * Sets what is run, once, when the far side's command ends without the
 * launcher's answer (it is not there) or with another build's, before
 * the command is run again. Its output explains a failure.
 *
 * Since: 0.2
 */
void
terret_far_side_set_install (TerretFarSide      *self,
                             const char * const *argv)
{
  g_return_if_fail (TERRET_IS_FAR_SIDE (self));
  g_return_if_fail (argv == NULL || argv[0] != NULL);

  g_strfreev (self->install);
  self->install = g_strdupv ((char **)argv);
}

/**
 * terret_far_side_set_probe:
 * @self: a far side
 * @argv: (array zero-terminated=1) (nullable): a command that runs
 *   something trivial on the far side without the launcher, such as
 *   `podman exec CONTAINER bash -c :`, or %NULL
 *
 * Sets what is run when the launcher could not be put in place on the
 * far side (its copy failed) or could not run there (a `noexec` mount),
 * to tell that apart from a far side that runs nothing at all (a stopped
 * container). When @argv exits with status 0 in the far side's timeout,
 * the run fails with %TERRET_EXEC_ERROR_NO_LAUNCHER, saying why the
 * launcher is not there in the engine's words, instead of
 * %TERRET_EXEC_ERROR_UNAVAILABLE: a backend that sets a probe can then
 * run commands there its own way, and must say what no longer holds. A
 * far side that does not answer in time is unavailable, probe or not.
 *
 * Since: 0.2
 */
void
terret_far_side_set_probe (TerretFarSide      *self,
                           const char * const *argv)
{
  g_return_if_fail (TERRET_IS_FAR_SIDE (self));
  g_return_if_fail (argv == NULL || argv[0] != NULL);

  g_strfreev (self->probe);
  self->probe = g_strdupv ((char **)argv);
}

/**
 * terret_far_side_set_timeout:
 * @self: a far side
 * @seconds: how long reaching the far side may take, copying the
 *   launcher in included (30 by default)
 *
 * Bounds the wait for the far launcher's answer: an engine that hangs
 * (a cluster that never answers) is killed after @seconds and the run
 * fails as unavailable.
 *
 * Since: 0.2
 */
void
terret_far_side_set_timeout (TerretFarSide *self,
                             double         seconds)
{
  g_return_if_fail (TERRET_IS_FAR_SIDE (self));
  g_return_if_fail (seconds > 0);

  self->timeout = seconds;
}

/**
 * terret_far_side_get_launcher:
 *
 * Gets the launcher program to run on a far side: a build of
 * `terret-launcher` linked statically, which needs no C library there.
 * It is installed beside the host's launcher; a tree that could not
 * build it has none, and a far side then cannot be reached.
 *
 * Returns: (type filename): its path on this host
 *
 * Since: 0.2
 */
const char *
terret_far_side_get_launcher (void)
{
  static gsize path;

  if (g_once_init_enter (&path))
    {
      g_autofree char *dir = g_path_get_dirname (_terret_launcher_program ());

      g_once_init_leave (&path, (gsize)g_build_filename (dir, "terret-launcher-static", NULL));
    }
  return (const char *)path;
}

/**
 * terret_far_side_get_launcher_id:
 *
 * Gets what identifies the build of the launcher
 * ([func@Terret.FarSide.get_launcher]): the far launcher reports it when
 * it answers, and one that reports another is copied in again. A backend
 * that copies the launcher in names the copy after it.
 *
 * Returns: a short string of hexadecimal digits
 *
 * Since: 0.2
 */
const char *
terret_far_side_get_launcher_id (void)
{
  return TERRET_LAUNCHER_BUILD_ID;
}

/* --- Private ------------------------------------------------------------ */

const char *
_terret_far_side_get_name (TerretFarSide *self)
{
  return self->name;
}

const char * const *
_terret_far_side_get_argv (TerretFarSide *self)
{
  return (const char * const *)self->argv;
}

const char * const *
_terret_far_side_get_install (TerretFarSide *self)
{
  return (const char * const *)self->install;
}

const char * const *
_terret_far_side_get_probe (TerretFarSide *self)
{
  return (const char * const *)self->probe;
}

double
_terret_far_side_get_timeout (TerretFarSide *self)
{
  return self->timeout;
}

gboolean
_terret_far_side_has_socket (TerretFarSide *self)
{
  return self->start != NULL;
}

/* Starts the launcher of a far side reached with a socket. */
gboolean
_terret_far_side_start (TerretFarSide       *self,
                        const char * const  *argv,
                        int                  socket_fd,
                        int                  output_fd,
                        GError             **error)
{
  g_autoptr(GError) local_error = NULL;

  if (self->start (self, argv, socket_fd, output_fd, self->start_data, &local_error))
    return TRUE;
  if (local_error == NULL)
    g_set_error (&local_error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                 "Could not reach %s: its launcher could not be started", self->name);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/* What tells two far sides apart, for an executor's pool of links. */
char *
_terret_far_side_dup_key (TerretFarSide *self)
{
  g_autofree char *argv = self->argv != NULL ? g_strjoinv ("\x1f", self->argv) : NULL;
  g_autofree char *install = self->install != NULL ? g_strjoinv ("\x1f", self->install)
                                                   : g_strdup ("");
  g_autofree char *probe = self->probe != NULL ? g_strjoinv ("\x1f", self->probe) : g_strdup ("");

  if (self->start != NULL)
    return g_strdup_printf ("socket\x1e%s\x1e%" G_GSIZE_MODIFIER "x\x1e%p\x1e%g", self->name,
                            (gsize)self->start, self->start_data, self->timeout);
  return g_strdup_printf ("far\x1e%s\x1e%s\x1e%s\x1e%s\x1e%g", self->name, argv, install, probe,
                          self->timeout);
}
