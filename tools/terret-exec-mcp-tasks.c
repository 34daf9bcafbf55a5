/* terret-exec-mcp-tasks.c: the tasks of `terret-exec mcp` (MCP 2025-11-25,
 * and the Tasks extension of 2026-07-28)
 *
 * A task is a tools/call that outlives its request: the server's own
 * record of it (its id, status, times, and the tool result once it
 * ended), kept in creation order for tasks/list and by id for the rest
 * (the taskId a tasks/ request names).
 * A task ends once (working, on 2026-07-28's wire perhaps input_required
 * between, then completed, failed or cancelled) and is
 * forgotten once its ttl since creation has passed and it has ended: one
 * timeout per task, and none while the server holds no task. The methods
 * over it are each wire's (terret-exec-mcp-2025.c, terret-exec-mcp-2026.c);
 * docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-exec-fields.h"
#include "terret-exec-mcp-tasks.h"

/* What a client is told to wait between two tasks/get. */
#define POLL_INTERVAL_MS 1000

/* tasks/list's page. */
#define LIST_PAGE 100

static const char * const status_names[] = {
  [CLI_MCP_TASK_WORKING] = "working",
  [CLI_MCP_TASK_INPUT_REQUIRED] = "input_required",
  [CLI_MCP_TASK_COMPLETED] = "completed",
  [CLI_MCP_TASK_FAILED] = "failed",
  [CLI_MCP_TASK_CANCELLED] = "cancelled",
};

struct _CliMcpTasks
{
  GHashTable *by_id;                /* (owned) id → CliMcpTask (owned) */
  GQueue order;                     /* CliMcpTask, oldest first */
  guint64 serial;                   /* tasks ever added: the list's cursors */
};

struct _CliMcpTask
{
  gatomicrefcount ref_count;
  CliMcpTasks *tasks;               /* (nullable) NULL once forgotten */
  char *id;                         /* (owned) */
  guint64 serial;
  CliMcpTaskStatus status;
  char *status_message;             /* (owned) (nullable) */
  GDateTime *created;               /* (owned) */
  GDateTime *updated;               /* (owned) */
  gint64 ttl;                       /* milliseconds */
  guint ttl_source;
  gboolean expired;
  JsonNode *result;                 /* (owned) (nullable) once ended */
  char *call_key;                   /* (owned) (nullable) its run's, while it runs */
  GPtrArray *waiters;               /* (owned) CliCall: tasks/result requests */
  gpointer data;                    /* (owned) (nullable) the wire's own */
  GDestroyNotify data_destroy;
  GList link;                       /* in CliMcpTasks.order */
};

CliMcpTasks *
cli_mcp_tasks_new (void)
{
  CliMcpTasks *tasks = g_new0 (CliMcpTasks, 1);

  tasks->by_id = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                        (GDestroyNotify) cli_mcp_task_unref);
  g_queue_init (&tasks->order);
  return tasks;
}

static void
task_forget (CliMcpTask *task)
{
  CliMcpTasks *tasks = task->tasks;

  g_clear_handle_id (&task->ttl_source, g_source_remove);
  task->tasks = NULL;
  g_queue_unlink (&tasks->order, &task->link);
  /* Last: it drops the table's reference. */
  g_hash_table_remove (tasks->by_id, task->id);
}

/* The server ends: every call, waiters included, has answered. */
void
cli_mcp_tasks_free (CliMcpTasks *tasks)
{
  while (tasks->order.head != NULL)
    task_forget (tasks->order.head->data);
  g_hash_table_unref (tasks->by_id);
  g_free (tasks);
}

static gboolean
on_ttl (gpointer user_data)
{
  CliMcpTask *task = user_data;

  task->ttl_source = 0;
  task->expired = TRUE;
  /* A task still working keeps its handle: it is forgotten when it ends,
   * once tasks/result requests waiting for it have their answer. */
  if (cli_mcp_task_is_terminal (task))
    task_forget (task);
  return G_SOURCE_REMOVE;
}

/*
 * cli_mcp_tasks_add:
 * @ttl: milliseconds to keep the task from its creation
 *
 * A new task, working, with a fresh id.
 *
 * Returns: (transfer none): the task, owned by @tasks
 */
CliMcpTask *
cli_mcp_tasks_add (CliMcpTasks *tasks,
                   gint64       ttl)
{
  CliMcpTask *task = g_new0 (CliMcpTask, 1);

  g_atomic_ref_count_init (&task->ref_count);
  task->tasks = tasks;
  task->id = g_uuid_string_random ();
  task->serial = ++tasks->serial;
  task->status = CLI_MCP_TASK_WORKING;
  task->created = g_date_time_new_now_utc ();
  task->updated = g_date_time_ref (task->created);
  task->ttl = CLAMP (ttl, 0, G_MAXUINT);
  task->waiters = g_ptr_array_new ();
  task->link.data = task;
  task->ttl_source = g_timeout_add_full (G_PRIORITY_DEFAULT, (guint) task->ttl, on_ttl, task, NULL);

  g_hash_table_insert (tasks->by_id, task->id, task);
  g_queue_push_tail_link (&tasks->order, &task->link);
  return task;
}

CliMcpTask *
cli_mcp_tasks_lookup (CliMcpTasks *tasks,
                      const char  *task_id)
{
  return g_hash_table_lookup (tasks->by_id, task_id);
}

/*
 * cli_mcp_tasks_find:
 * @params: (nullable): a tasks/ request's params
 * @doing: what the request does to the task, for the error
 *
 * The task whose taskId @params name.
 *
 * Returns: (transfer none) (nullable): the task, or %NULL with @error
 */
CliMcpTask *
cli_mcp_tasks_find (CliMcpTasks  *tasks,
                    JsonObject   *params,
                    const char   *doing,
                    GError      **error)
{
  const char *task_id = NULL;
  CliMcpTask *task;

  if (params == NULL || !cli_json_get_string (params, "taskId", &task_id) || task_id == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "“taskId” (a string) is required");
      return NULL;
    }

  task = cli_mcp_tasks_lookup (tasks, task_id);
  if (task == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                 "Failed to %s task: no task “%s” (never made, or forgotten after its ttl)",
                 doing, task_id);
  return task;
}

/*
 * cli_mcp_tasks_find_to_cancel:
 *
 * The task a tasks/cancel's @params name, while it has not ended.
 *
 * Returns: (transfer none) (nullable): the task, or %NULL with @error
 */
CliMcpTask *
cli_mcp_tasks_find_to_cancel (CliMcpTasks  *tasks,
                              JsonObject   *params,
                              GError      **error)
{
  CliMcpTask *task = cli_mcp_tasks_find (tasks, params, "cancel", error);

  if (task != NULL && cli_mcp_task_is_terminal (task))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Cannot cancel task: already in terminal status '%s'",
                   cli_mcp_task_get_status_name (task));
      return NULL;
    }
  return task;
}

/* Forgets a task that was refused before it ran. */
void
cli_mcp_tasks_remove (CliMcpTasks *tasks,
                      CliMcpTask  *task)
{
  g_assert (task->tasks == tasks);
  task_forget (task);
}

/* Forgets @task if its ttl passed while it was working: it has ended and
 * answered its waiters. */
void
cli_mcp_tasks_settle (CliMcpTasks *tasks,
                      CliMcpTask  *task)
{
  if (task->tasks == tasks && task->expired && cli_mcp_task_is_terminal (task))
    task_forget (task);
}

/*
 * cli_mcp_tasks_list:
 * @cursor: (nullable): a nextCursor this server gave
 *
 * A page of tasks/list: the tasks the server holds, oldest first. The
 * cursor is the serial of the last task listed, so a page goes on after
 * it even when tasks before it were forgotten meanwhile.
 */
JsonNode *
cli_mcp_tasks_list (CliMcpTasks  *tasks,
                    const char   *cursor,
                    GError      **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  guint64 after = 0;
  guint listed = 0;
  GList *l;

  /* With no task ever made no cursor was given (and 1 > 0 would be a
   * range g_ascii_string_to_unsigned() refuses). */
  if (cursor != NULL &&
      (tasks->serial == 0 ||
       !g_ascii_string_to_unsigned (cursor, 10, 1, tasks->serial, &after, NULL)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“cursor”: not a cursor this server gave: “%s”", cursor);
      return NULL;
    }

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tasks");
  json_builder_begin_array (builder);
  for (l = tasks->order.head; l != NULL; l = l->next)
    {
      CliMcpTask *task = l->data;

      if (task->serial <= after)
        continue;
      if (listed == LIST_PAGE)
        break;
      json_builder_add_value (builder, cli_mcp_task_to_json (task));
      after = task->serial;
      listed++;
    }
  json_builder_end_array (builder);
  if (l != NULL)
    {
      g_autofree char *next = g_strdup_printf ("%" G_GUINT64_FORMAT, after);

      json_builder_set_member_name (builder, "nextCursor");
      json_builder_add_string_value (builder, next);
    }
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

CliMcpTask *
cli_mcp_task_ref (CliMcpTask *task)
{
  g_atomic_ref_count_inc (&task->ref_count);
  return task;
}

void
cli_mcp_task_unref (CliMcpTask *task)
{
  if (!g_atomic_ref_count_dec (&task->ref_count))
    return;

  g_assert (task->tasks == NULL);
  g_assert (task->waiters->len == 0);
  g_free (task->id);
  g_free (task->status_message);
  g_free (task->call_key);
  g_date_time_unref (task->created);
  g_date_time_unref (task->updated);
  g_clear_pointer (&task->result, json_node_unref);
  g_ptr_array_unref (task->waiters);
  if (task->data_destroy != NULL)
    task->data_destroy (task->data);
  g_free (task);
}

const char *
cli_mcp_task_get_id (CliMcpTask *task)
{
  return task->id;
}

CliMcpTaskStatus
cli_mcp_task_get_status (CliMcpTask *task)
{
  return task->status;
}

const char *
cli_mcp_task_get_status_name (CliMcpTask *task)
{
  return status_names[task->status];
}

gboolean
cli_mcp_task_is_terminal (CliMcpTask *task)
{
  return task->status != CLI_MCP_TASK_WORKING && task->status != CLI_MCP_TASK_INPUT_REQUIRED;
}

/*
 * cli_mcp_task_set_running:
 * @status: working or input_required
 * @message: (nullable): the statusMessage
 *
 * Moves a task that has not ended between working and input_required.
 */
void
cli_mcp_task_set_running (CliMcpTask       *task,
                          CliMcpTaskStatus  status,
                          const char       *message)
{
  g_assert (status == CLI_MCP_TASK_WORKING || status == CLI_MCP_TASK_INPUT_REQUIRED);
  g_assert (!cli_mcp_task_is_terminal (task));

  task->status = status;
  g_free (task->status_message);
  task->status_message = g_strdup (message);
  g_date_time_unref (task->updated);
  task->updated = g_date_time_new_now_utc ();
}

const char *
cli_mcp_task_get_status_message (CliMcpTask *task)
{
  return task->status_message;
}

GDateTime *
cli_mcp_task_get_created (CliMcpTask *task)
{
  return task->created;
}

GDateTime *
cli_mcp_task_get_updated (CliMcpTask *task)
{
  return task->updated;
}

/* Milliseconds from its creation. */
gint64
cli_mcp_task_get_ttl (CliMcpTask *task)
{
  return task->ttl;
}

gpointer
cli_mcp_task_get_data (CliMcpTask *task)
{
  return task->data;
}

/* @data: (transfer full): freed with @destroy with the task */
void
cli_mcp_task_set_data (CliMcpTask     *task,
                       gpointer        data,
                       GDestroyNotify  destroy)
{
  g_assert (task->data == NULL);
  task->data = data;
  task->data_destroy = destroy;
}

/*
 * cli_mcp_task_end:
 * @message: (nullable): the statusMessage
 * @result: (transfer full) (nullable): what tasks/result answers
 *
 * Moves a working task to a terminal @status; a task that ended already
 * stays as it is (a cancelled task whose run completes after all).
 *
 * Returns: whether the task ended now
 */
gboolean
cli_mcp_task_end (CliMcpTask       *task,
                  CliMcpTaskStatus  status,
                  const char       *message,
                  JsonNode         *result)
{
  g_assert (status != CLI_MCP_TASK_WORKING && status != CLI_MCP_TASK_INPUT_REQUIRED);

  if (cli_mcp_task_is_terminal (task))
    {
      g_clear_pointer (&result, json_node_unref);
      return FALSE;
    }

  task->status = status;
  g_free (task->status_message);
  task->status_message = g_strdup (message);
  g_date_time_unref (task->updated);
  task->updated = g_date_time_new_now_utc ();
  task->result = result;
  return TRUE;
}

/* (nullable) (transfer none) */
JsonNode *
cli_mcp_task_get_result (CliMcpTask *task)
{
  return task->result;
}

const char *
cli_mcp_task_get_call_key (CliMcpTask *task)
{
  return task->call_key;
}

void
cli_mcp_task_set_call_key (CliMcpTask *task,
                           const char *key)
{
  g_free (task->call_key);
  task->call_key = g_strdup (key);
}

/*
 * cli_mcp_task_call_id:
 *
 * The id of a call that runs @task: one no request can have (an object),
 * so the client may reuse the id of the request that made the task once
 * it has its answer.
 *
 * Returns: (transfer full): `{"task": its id}`
 */
JsonNode *
cli_mcp_task_call_id (CliMcpTask *task)
{
  JsonNode *id = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (id, json_object_new ());
  json_object_set_string_member (json_node_get_object (id), "task", task->id);
  return id;
}

/* The members of a Task object, for one being built. */
void
cli_mcp_task_add_members (CliMcpTask  *task,
                          JsonBuilder *builder)
{
  g_autofree char *created = g_date_time_format_iso8601 (task->created);
  g_autofree char *updated = g_date_time_format_iso8601 (task->updated);

  json_builder_set_member_name (builder, "taskId");
  json_builder_add_string_value (builder, task->id);
  json_builder_set_member_name (builder, "status");
  json_builder_add_string_value (builder, status_names[task->status]);
  if (task->status_message != NULL)
    {
      g_autofree char *valid = g_utf8_make_valid (task->status_message, -1);

      json_builder_set_member_name (builder, "statusMessage");
      json_builder_add_string_value (builder, valid);
    }
  json_builder_set_member_name (builder, "createdAt");
  json_builder_add_string_value (builder, created);
  json_builder_set_member_name (builder, "lastUpdatedAt");
  json_builder_add_string_value (builder, updated);
  json_builder_set_member_name (builder, "ttl");
  json_builder_add_int_value (builder, task->ttl);
  json_builder_set_member_name (builder, "pollInterval");
  json_builder_add_int_value (builder, POLL_INTERVAL_MS);
}

JsonNode *
cli_mcp_task_to_json (CliMcpTask *task)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  cli_mcp_task_add_members (task, builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* A tasks/result request, answered when the task ends. */
void
cli_mcp_task_add_waiter (CliMcpTask *task,
                         CliCall    *call)
{
  g_ptr_array_add (task->waiters, call);
}

gboolean
cli_mcp_task_remove_waiter (CliMcpTask *task,
                            CliCall    *call)
{
  return g_ptr_array_remove (task->waiters, call);
}

/* (transfer full): the waiters, which the task no longer has. */
GPtrArray *
cli_mcp_task_take_waiters (CliMcpTask *task)
{
  GPtrArray *waiters = g_steal_pointer (&task->waiters);

  task->waiters = g_ptr_array_new ();
  return waiters;
}
