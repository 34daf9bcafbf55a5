/* terret-exec.c: run one command through a terret-exec backend, list the
 * backends, serve requests as JSON Lines (terret-exec-serve.c) or the
 * Model Context Protocol (terret-exec-mcp.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"

typedef struct
{
  GMainLoop *loop;            /* (owned) */
  GCancellable *cancellable;  /* (owned) */
  TerretResult *result;       /* (owned) (nullable) */
  GError *error;              /* (owned) (nullable) */
  GError *output_error;       /* (owned) (nullable) */
  int caught_signal;
  gboolean done;
} RunState;

static void
run_state_clear (RunState *state)
{
  g_clear_pointer (&state->loop, g_main_loop_unref);
  g_clear_object (&state->cancellable);
  g_clear_object (&state->result);
  g_clear_error (&state->error);
  g_clear_error (&state->output_error);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunState, run_state_clear)

/* A signal to the CLI cancels the run; the process exits only once the
 * backend has reported the run over, so nothing it started is orphaned. */
static gboolean
on_signal (gpointer user_data,
           int      signum)
{
  RunState *state = user_data;

  if (state->caught_signal == 0)
    state->caught_signal = signum;
  g_cancellable_cancel (state->cancellable);

  return G_SOURCE_CONTINUE;
}

static gboolean
on_sigint (gpointer user_data)
{
  return on_signal (user_data, SIGINT);
}

static gboolean
on_sigterm (gpointer user_data)
{
  return on_signal (user_data, SIGTERM);
}

/* Output goes out as it arrives, unbuffered, so an interleaving of stdout
 * and stderr on a terminal is the command's own. When a reader goes away
 * the run is cancelled, as a pipeline's writer would die of SIGPIPE. */
static void
write_output (RunState     *state,
              TerretStream  stream,
              const guint8 *data,
              gsize         len)
{
  int fd = stream == TERRET_STREAM_STDERR ? STDERR_FILENO : STDOUT_FILENO;

  if (state->output_error != NULL || len == 0)
    return;

  if (!cli_write_all (fd, data, len, &state->output_error))
    g_cancellable_cancel (state->cancellable);
}

static void
on_progress (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  gsize len = 0;
  const guint8 *bytes = g_bytes_get_data (data, &len);

  write_output (user_data, stream, bytes, len);
}

static void
run_done (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  RunState *state = user_data;

  state->result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &state->error);
  state->done = TRUE;
  g_main_loop_quit (state->loop);
}

static void
print_notice (const char *notice)
{
  g_autofree char *line = g_strdup_printf ("terret-exec: %s\n", notice);

  cli_write_all (STDERR_FILENO, line, strlen (line), NULL);
}

static gboolean
write_json (JsonNode *node)
{
  g_autoptr(GError) error = NULL;

  if (!cli_write_json_line (STDOUT_FILENO, node, &error))
    {
      print_notice (error->message);
      return FALSE;
    }

  return TRUE;
}

/* Reports a failure before anything ran: as the JSON response in --json
 * mode (the caller parses stdout), else as a message on stderr. */
static int
fail_not_run (gboolean      json,
              const GError *error)
{
  if (json)
    {
      g_autoptr(JsonNode) response = cli_response_new (NULL, NULL, error);

      write_json (response);
    }
  else
    print_notice (error->message);

  return CLI_EXIT_NOT_RUN;
}

/* The kept bytes of @stream, with the marker line where the capture left
 * bytes out. */
static void
write_kept (RunState     *state,
            TerretStream  stream)
{
  GBytes *bytes = stream == TERRET_STREAM_STDOUT ? terret_result_get_stdout (state->result)
                                                 : terret_result_get_stderr (state->result);
  g_autofree char *marker = terret_result_format_omitted (state->result, stream);
  gsize cut = terret_result_get_cut_offset (state->result, stream);
  gsize len = 0;
  const guint8 *data;

  if (bytes == NULL)
    return;
  data = g_bytes_get_data (bytes, &len);
  if (marker == NULL)
    {
      write_output (state, stream, data, len);
      return;
    }
  cut = MIN (cut, len);
  write_output (state, stream, data, cut);
  write_output (state, stream, (const guint8 *) marker, strlen (marker));
  write_output (state, stream, data + cut, len - cut);
}

static int
run_command (TerretExecutor    *executor,
             TerretRequest     *request,
             gboolean           json)
{
  g_auto(RunState) state = { 0 };
  TerretCaptureMode capture = terret_request_get_capture (request);
  gboolean streamed;
  guint sigint_id, sigterm_id;
  int status;

  state.loop = g_main_loop_new (NULL, FALSE);
  state.cancellable = g_cancellable_new ();

  /* Without live progress the output is written when the run is over;
   * so is it with --capture, marker line included. */
  streamed = !json && capture == TERRET_CAPTURE_MODE_DEFAULT &&
             (terret_executor_get_capabilities (executor) & TERRET_CAPABILITY_PROGRESS);
  if (streamed)
    terret_request_set_progress_func (request, on_progress, &state, NULL);

  sigint_id = g_unix_signal_add (SIGINT, on_sigint, &state);
  sigterm_id = g_unix_signal_add (SIGTERM, on_sigterm, &state);

  terret_executor_run_async (executor, request, state.cancellable, run_done, &state);
  while (!state.done)
    g_main_loop_run (state.loop);

  /* The request may outlive this frame inside the backend; it must not
   * call back into it. */
  terret_request_set_progress_func (request, NULL, NULL, NULL);
  if (state.result != NULL)
    cli_take_full_output (state.result);
  terret_executor_close_all (executor);

  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);

  if (json)
    {
      g_autoptr(JsonNode) response = cli_response_new (NULL, state.result, state.error);

      write_json (response);
    }
  else if (state.result != NULL)
    {
      const char *notice = terret_result_get_notice (state.result);

      if (!streamed)
        {
          write_kept (&state, TERRET_STREAM_STDOUT);
          write_kept (&state, TERRET_STREAM_STDERR);
        }

      for (guint i = 0; i <= TERRET_STREAM_STDERR; i++)
        if (terret_result_get_full_output (state.result, i) != NULL)
          {
            g_autofree char *line = g_strdup_printf ("full %s: %s",
                                                     i == 0 ? "output" : "standard error",
                                                     terret_result_get_full_output (state.result, i));

            print_notice (line);
          }

      if (notice != NULL)
        print_notice (notice);
      else if (terret_result_get_timed_out (state.result))
        print_notice ("the command timed out");
      else if (!terret_result_get_exited (state.result) &&
               terret_result_get_term_signal (state.result) == 0)
        print_notice ("the command ended without reporting an exit status");
    }
  else if (state.caught_signal == 0 && state.output_error == NULL)
    print_notice (state.error->message);

  if (state.caught_signal != 0)
    return CLI_EXIT_SIGNAL_BASE + state.caught_signal;

  if (state.output_error != NULL)
    {
      if (!g_error_matches (state.output_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        print_notice (state.output_error->message);
      return CLI_EXIT_SIGNAL_BASE + SIGPIPE;
    }

  if (state.result == NULL)
    status = CLI_EXIT_NOT_RUN;
  else
    status = cli_exit_code_for_result (state.result);

  return status;
}

/* --list-backends ------------------------------------------------------ */

static const char *
describe_type (GParamSpec *pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  if (type == G_TYPE_BOOLEAN)
    return "boolean";
  if (type == G_TYPE_INT || type == G_TYPE_LONG || type == G_TYPE_INT64 ||
      type == G_TYPE_UINT || type == G_TYPE_ULONG || type == G_TYPE_UINT64)
    return "integer";
  if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT)
    return "number";
  if (type == G_TYPE_STRING)
    return "string";
  if (type == G_TYPE_STRV)
    return "list";
  if (G_TYPE_IS_ENUM (type))
    return "enum";
  if (G_TYPE_IS_FLAGS (type))
    return "flags";

  return g_type_name (type);
}

/* A default as JSON: numbers as numbers, an unset string or list as null,
 * anything else in the text `--set` takes. */
static JsonNode *
value_to_json (const GValue *value)
{
  GType type = G_VALUE_TYPE (value);
  JsonNode *node = json_node_alloc ();
  g_autofree char *text = NULL;

  if (type == G_TYPE_BOOLEAN)
    return json_node_init_boolean (node, g_value_get_boolean (value));
  if (type == G_TYPE_INT)
    return json_node_init_int (node, g_value_get_int (value));
  if (type == G_TYPE_UINT)
    return json_node_init_int (node, g_value_get_uint (value));
  if (type == G_TYPE_LONG)
    return json_node_init_int (node, g_value_get_long (value));
  if (type == G_TYPE_ULONG)
    return json_node_init_int (node, (gint64) g_value_get_ulong (value));
  if (type == G_TYPE_INT64)
    return json_node_init_int (node, g_value_get_int64 (value));
  if (type == G_TYPE_UINT64)
    {
      guint64 v = g_value_get_uint64 (value);

      /* JSON has no unsigned 64-bit integers; past G_MAXINT64 a double
       * is the honest approximation. */
      if (v > G_MAXINT64)
        return json_node_init_double (node, (double) v);
      return json_node_init_int (node, (gint64) v);
    }
  if (type == G_TYPE_DOUBLE)
    return json_node_init_double (node, g_value_get_double (value));
  if (type == G_TYPE_FLOAT)
    return json_node_init_double (node, g_value_get_float (value));
  if (type == G_TYPE_STRV && g_value_get_boxed (value) != NULL)
    {
      const char * const *strv = g_value_get_boxed (value);
      g_autoptr(JsonArray) array = json_array_new ();

      for (guint i = 0; strv[i] != NULL; i++)
        json_array_add_string_element (array, strv[i]);
      return json_node_init_array (node, array);
    }

  text = terret_setting_value_to_string (value);
  return text != NULL ? json_node_init_string (node, text) : json_node_init_null (node);
}

/* The same default as the text `--set` would take; unset and an empty
 * list said in words. */
static char *
default_to_text (GParamSpec *pspec)
{
  const GValue *value = g_param_spec_get_default_value (pspec);
  g_autofree char *text = terret_setting_value_to_string (value);

  if (text == NULL)
    return g_strdup ("unset");
  if (G_VALUE_HOLDS (value, G_TYPE_STRV) && *text == '\0')
    return g_strdup ("empty");
  return g_steal_pointer (&text);
}

static void
free_backend_list (GList *list)
{
  g_list_free_full (list, g_object_unref);
}

typedef GList BackendList;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (BackendList, free_backend_list)

/* What the backend says holds here; an instance made for asking, never
 * initialized, so nothing starts. */
static char *
describe_containment (TerretBackendInfo *info)
{
  g_autoptr(GObject) executor = g_object_new (terret_backend_info_get_backend_type (info), NULL);

  return terret_executor_dup_containment (TERRET_EXECUTOR (executor));
}

static JsonNode *
backends_to_json (void)
{
  g_autoptr(BackendList) infos = terret_backend_info_list ();
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_array (builder);

  for (GList *l = infos; l != NULL; l = l->next)
    {
      TerretBackendInfo *info = l->data;
      g_autoptr(GError) error = NULL;
      gboolean supported = terret_backend_info_check_supported (info, &error);
      guint n_settings = 0;
      g_autofree GParamSpec **settings = terret_backend_info_list_settings (info, &n_settings);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, terret_backend_info_get_name (info));
      json_builder_set_member_name (builder, "priority");
      json_builder_add_int_value (builder, terret_backend_info_get_priority (info));
      json_builder_set_member_name (builder, "supported");
      json_builder_add_boolean_value (builder, supported);
      json_builder_set_member_name (builder, "reason");
      if (supported)
        json_builder_add_null_value (builder);
      else
        json_builder_add_string_value (builder, error->message);
      json_builder_set_member_name (builder, "module");
      if (terret_backend_info_get_module_path (info) != NULL)
        json_builder_add_string_value (builder, terret_backend_info_get_module_path (info));
      else
        json_builder_add_null_value (builder);

      {
        g_autofree char *containment = describe_containment (info);

        json_builder_set_member_name (builder, "containment");
        if (containment != NULL)
          json_builder_add_string_value (builder, containment);
        else
          json_builder_add_null_value (builder);
      }

      json_builder_set_member_name (builder, "settings");
      json_builder_begin_array (builder);
      for (guint i = 0; i < n_settings; i++)
        {
          GParamSpec *pspec = settings[i];
          const char *blurb = g_param_spec_get_blurb (pspec);

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, g_param_spec_get_name (pspec));
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, describe_type (pspec));
          json_builder_set_member_name (builder, "default");
          json_builder_add_value (builder, value_to_json (g_param_spec_get_default_value (pspec)));
          json_builder_set_member_name (builder, "description");
          if (blurb != NULL)
            json_builder_add_string_value (builder, blurb);
          else
            json_builder_add_null_value (builder);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);

      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);

  return json_builder_get_root (builder);
}

static char *
backends_to_text (void)
{
  g_autoptr(BackendList) infos = terret_backend_info_list ();
  g_autoptr(GString) out = g_string_new (NULL);

  for (GList *l = infos; l != NULL; l = l->next)
    {
      TerretBackendInfo *info = l->data;
      g_autoptr(GError) error = NULL;
      gboolean supported = terret_backend_info_check_supported (info, &error);
      guint n_settings = 0;
      g_autofree GParamSpec **settings = terret_backend_info_list_settings (info, &n_settings);
      const char *module = terret_backend_info_get_module_path (info);

      if (out->len > 0)
        g_string_append_c (out, '\n');
      g_string_append_printf (out, "%s (priority %d): %s%s\n",
                              terret_backend_info_get_name (info),
                              terret_backend_info_get_priority (info),
                              supported ? "supported" : "not supported: ",
                              supported ? "" : error->message);
      g_string_append_printf (out, "  module: %s\n", module != NULL ? module : "(built in)");
      {
        g_autofree char *containment = describe_containment (info);

        if (containment != NULL)
          g_string_append_printf (out, "  containment: %s\n", containment);
      }

      if (n_settings == 0)
        g_string_append (out, "  settings: none\n");
      else
        g_string_append (out, "  settings:\n");

      for (guint i = 0; i < n_settings; i++)
        {
          GParamSpec *pspec = settings[i];
          const char *blurb = g_param_spec_get_blurb (pspec);
          g_autofree char *def = default_to_text (pspec);

          g_string_append_printf (out, "    %s (%s, default %s)\n",
                                  g_param_spec_get_name (pspec), describe_type (pspec), def);
          if (blurb != NULL)
            g_string_append_printf (out, "        %s\n", blurb);
        }
    }

  return g_string_free (g_steal_pointer (&out), FALSE);
}

static int
list_backends (gboolean json)
{
  if (json)
    {
      g_autoptr(JsonNode) node = backends_to_json ();

      return write_json (node) ? EXIT_SUCCESS : EXIT_FAILURE;
    }
  else
    {
      g_autofree char *text = backends_to_text ();

      return cli_write_all (STDOUT_FILENO, text, strlen (text), NULL) ? EXIT_SUCCESS : EXIT_FAILURE;
    }
}

/* main ----------------------------------------------------------------- */

/* A handler rather than SIG_IGN: an ignored SIGPIPE would be inherited by
 * every command the backends spawn, and `yes | head` in them would then
 * print errors instead of ending quietly. A caught one is reset on exec. */
static void
on_sigpipe (int signum)
{
}

static void
catch_sigpipe (void)
{
  struct sigaction sa = { 0 };

  sa.sa_handler = on_sigpipe;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGPIPE, &sa, NULL);
}

/* A closed stdin, stdout or stderr would be reused by the first file the
 * process opens (an eventfd of the main loop, a pipe to the shell), and
 * output meant for the caller would go there. /dev/null takes its place. */
static void
ensure_stdio (void)
{
  for (int fd = 0; fd <= 2; fd++)
    {
      int null_fd;

      if (fcntl (fd, F_GETFD) >= 0 || errno != EBADF)
        continue;

      null_fd = open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null_fd >= 0 && null_fd != fd)
        {
          dup2 (null_fd, fd);
          close (null_fd);
        }
    }
}

static const char summary[] =
  "Runs COMMAND in a shell session through a terret-exec backend, streams\n"
  "its output, and exits with its status. The command is -c COMMAND, or the\n"
  "words after the options joined with single spaces (as ssh does), so\n"
  "quoting is the shell's: terret-exec -- 'echo \"$HOME\"'. Use -- before\n"
  "the words when they have options of their own.\n"
  "\n"
  "  terret-exec serve [--backend NAME] [--set KEY=VALUE]...\n"
  "serves requests as JSON Lines on stdin/stdout (see serve --help).\n"
  "  terret-exec mcp [--backend NAME] [--set KEY=VALUE]...\n"
  "serves the Model Context Protocol on stdin/stdout (see mcp --help).";

static const char description[] =
  "Exit status:\n"
  "  N        the command's own exit status\n"
  "  124      the command timed out\n"
  "  125      nothing ran (bad usage, unknown backend, bad setting, busy,\n"
  "           no shell): the reason is on stderr\n"
  "  128+N    signal N ended the command, or terret-exec got SIGINT (130)\n"
  "           or SIGTERM (143) and cancelled the run\n"
  "  141      the output could not be written (its reader went away)\n"
  "  255      the command ran but reported no exit status (its shell\n"
  "           ended under it); the notice on stderr says why\n"
  "\n"
  "The backend is --backend, else $TERRET_EXECUTOR, else [executor] backend=\n"
  "in terret-exec/executor.conf under $XDG_CONFIG_HOME or $XDG_CONFIG_DIRS,\n"
  "else the highest-priority backend that works here (--list-backends).";

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *backend = NULL;
  g_autofree char *session = NULL;
  g_autofree char *command_opt = NULL;
  g_autofree char *command = NULL;
  g_autofree char *capture_opt = NULL;
  TerretCaptureMode capture = TERRET_CAPTURE_MODE_DEFAULT;
  g_auto(GStrv) settings = NULL;
  g_auto(GStrv) words = NULL;
  g_autofree char *cwd = NULL;
  g_auto(GStrv) env = NULL;
  g_autofree char *on_idle_opt = NULL;
  g_autoptr(TerretRequest) request = NULL;
  int on_idle = TERRET_IDLE_ACTION_KILL;
  double return_after = 0, deadline = 0, idle_timeout = 0;
  double timeout = 0;
  gboolean json = FALSE;
  gboolean list = FALSE;
  gboolean check = FALSE;
  gboolean version = FALSE;
  const GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
      "Use the backend NAME instead of the configured one", "NAME" },
    { "session", 's', 0, G_OPTION_ARG_STRING, &session,
      "Run in the session KEY (default “default”)", "KEY" },
    { "timeout", 't', 0, G_OPTION_ARG_DOUBLE, &timeout,
      "Stop the command after SECS seconds (fractions allowed; 0: the backend's setting)", "SECS" },
    { "return-after", 0, 0, G_OPTION_ARG_DOUBLE, &return_after,
      "Return the output so far after SECS seconds; the command does not outlive terret-exec, "
      "so it is ended then", "SECS" },
    { "deadline", 0, 0, G_OPTION_ARG_DOUBLE, &deadline,
      "End the command and everything it started after SECS seconds", "SECS" },
    { "idle-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &idle_timeout,
      "Apply --on-idle after SECS seconds without output", "SECS" },
    { "on-idle", 0, 0, G_OPTION_ARG_STRING, &on_idle_opt,
      "What --idle-timeout does: kill (default) or return (hand back the output so far, "
      "marked stalled)", "ACTION" },
    { "cwd", 0, 0, G_OPTION_ARG_FILENAME, &cwd,
      "Run the command in DIR (relative: to the session's cwd)", "DIR" },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env,
      "Set VAR for the command (repeatable)", "VAR=VALUE" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &settings,
      "Set a backend setting (repeatable; see --list-backends)", "KEY=VALUE" },
    { "capture", 0, 0, G_OPTION_ARG_STRING, &capture_opt,
      "Keep the head, tail or head-tail of output past max-output, written with a marker line "
      "where bytes were left out", "MODE" },
    { "command", 'c', 0, G_OPTION_ARG_STRING, &command_opt,
      "The command to run", "COMMAND" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json,
      "Print one JSON object (the serve response) instead of streaming", NULL },
    { "list-backends", 0, 0, G_OPTION_ARG_NONE, &list,
      "List the backends, whether they work here, and their settings", NULL },
    { "check", 0, 0, G_OPTION_ARG_NONE, &check,
      "Say what the backend and its settings hold here (containment, sandbox, limits), try "
      "them, and exit non-zero when they cannot hold", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version,
      "Print the version and exit", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &words,
      NULL, "[--] [WORD…]" },
    G_OPTION_ENTRY_NULL
  };

  setlocale (LC_ALL, "");
  ensure_stdio ();
  catch_sigpipe ();

  if (argc > 1 && g_str_equal (argv[1], "serve"))
    return cli_serve_main (argc - 1, argv + 1);
  if (argc > 1 && g_str_equal (argv[1], "mcp"))
    return cli_mcp_main (argc - 1, argv + 1);

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, NULL);
  /* Options end at the first word of the command, so its own options
   * (`terret-exec ls -l`) are not taken for ours. */
  g_option_context_set_strict_posix (context, TRUE);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("terret-exec: %s\nTry “terret-exec --help”.\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  if (version)
    {
      g_print ("terret-exec %s\n", PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }

  if (list)
    return list_backends (json);

  if (check)
    {
      executor = terret_executor_new_with_settings (backend, (const char * const *)settings, &error);
      if (executor == NULL)
        {
          g_print ("backend: FAILED: %s\n", error->message);
          return EXIT_FAILURE;
        }
      return cli_check (executor);
    }

  if (command_opt != NULL && words != NULL)
    {
      g_printerr ("terret-exec: give the command either with -c or as words, not both\n");
      return CLI_EXIT_NOT_RUN;
    }

  if (command_opt != NULL)
    command = g_steal_pointer (&command_opt);
  else if (words != NULL && words[0] != NULL)
    command = g_strjoinv (" ", words);
  else
    {
      g_printerr ("terret-exec: no command: give -c COMMAND or words after --\n"
                  "Try “terret-exec --help”.\n");
      return CLI_EXIT_NOT_RUN;
    }

  if (!cli_check_seconds ("--timeout", timeout, &error))
    return fail_not_run (json, error);

  if (capture_opt != NULL && !cli_parse_capture (capture_opt, &capture, &error))
    return fail_not_run (json, error);

  if (!cli_check_seconds ("--return-after", return_after, &error) ||
      !cli_check_seconds ("--deadline", deadline, &error) ||
      !cli_check_seconds ("--idle-timeout", idle_timeout, &error) ||
      (on_idle_opt != NULL &&
       !cli_enum_from_nick (TERRET_TYPE_IDLE_ACTION, "--on-idle", on_idle_opt, &on_idle, &error)))
    return fail_not_run (json, error);

  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    if (strchr (env[i], '=') == NULL || env[i][0] == '=')
      {
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "--env takes VAR=VALUE, not “%s”", env[i]);
        return fail_not_run (json, error);
      }

  request = terret_request_new (command);
  if (session != NULL)
    terret_request_set_session (request, session);
  terret_request_set_timeout (request, timeout);
  terret_request_set_capture (request, capture);
  terret_request_set_cwd (request, cwd);
  if (env != NULL)
    terret_request_set_env (request, (const char * const *)env);
  terret_request_set_return_after (request, return_after);
  terret_request_set_deadline (request, deadline);
  terret_request_set_idle_timeout (request, idle_timeout, on_idle);

  executor = terret_executor_new_with_settings (backend, (const char * const *)settings, &error);
  if (executor == NULL)
    return fail_not_run (json, error);

  return run_command (executor, request, json);
}
