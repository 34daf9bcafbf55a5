/* terret-settings-text.c: backend settings as text: read from a
 * configuration file or a command line and applied, and written back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "terret-backend-info-private.h"
#include "terret-error.h"
#include "terret-executor.h"

static char *describe_type (GParamSpec *pspec);

static gboolean
invalid (GError    **error,
         GParamSpec *pspec,
         const char *text,
         const char *why)
{
  g_autofree char *expected = describe_type (pspec);

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
               "invalid value “%s” for %s: %s%sexpected %s",
               text, g_param_spec_get_name (pspec),
               why != NULL ? why : "", why != NULL ? "; " : "", expected);
  return FALSE;
}

static gboolean
parse_boolean (const char *text,
               gboolean   *out)
{
  static const char * const yes[] = { "true", "yes", "on", "1", NULL };
  static const char * const no[] = { "false", "no", "off", "0", NULL };

  for (guint i = 0; yes[i] != NULL; i++)
    {
      if (g_ascii_strcasecmp (text, yes[i]) == 0 ||
          g_ascii_strcasecmp (text, no[i]) == 0)
        {
          *out = g_ascii_strcasecmp (text, yes[i]) == 0;
          return TRUE;
        }
    }

  return FALSE;
}

/* A list in GKeyFile's own syntax (`a;b;c`, `\;` for a literal `;`), so a
 * value reads the same in executor.conf and after `--set`. */
static GStrv
parse_list (const char *text)
{
  g_autoptr(GKeyFile) key_file = g_key_file_new ();

  g_key_file_set_value (key_file, "list", "value", text);
  return g_key_file_get_string_list (key_file, "list", "value", NULL, NULL);
}

static gboolean
parse_integer (GParamSpec *pspec,
               const char *text,
               GValue     *value,
               GError    **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autoptr(GError) local_error = NULL;
  gint64 smin = 0, smax = 0, sval = 0;
  guint64 umin = 0, umax = 0, uval = 0;
  gboolean is_signed = TRUE;

  if (G_IS_PARAM_SPEC_INT (pspec))
    smin = G_PARAM_SPEC_INT (pspec)->minimum, smax = G_PARAM_SPEC_INT (pspec)->maximum;
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    smin = G_PARAM_SPEC_LONG (pspec)->minimum, smax = G_PARAM_SPEC_LONG (pspec)->maximum;
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    smin = G_PARAM_SPEC_INT64 (pspec)->minimum, smax = G_PARAM_SPEC_INT64 (pspec)->maximum;
  else
    {
      is_signed = FALSE;
      if (G_IS_PARAM_SPEC_UINT (pspec))
        umin = G_PARAM_SPEC_UINT (pspec)->minimum, umax = G_PARAM_SPEC_UINT (pspec)->maximum;
      else if (G_IS_PARAM_SPEC_ULONG (pspec))
        umin = G_PARAM_SPEC_ULONG (pspec)->minimum, umax = G_PARAM_SPEC_ULONG (pspec)->maximum;
      else
        umin = G_PARAM_SPEC_UINT64 (pspec)->minimum, umax = G_PARAM_SPEC_UINT64 (pspec)->maximum;
    }

  if (type == G_TYPE_UINT64)
    {
      /* Sizes in bytes take binary suffixes: 64M, 2G, 512KiB. */
      static const char units[] = "KMGT";
      g_autofree char *digits = g_strdup (text);
      gsize len = strlen (digits);
      guint shift = 0;

      if (len > 2 && g_str_has_suffix (digits, "iB"))
        digits[len -= 2] = '\0';
      else if (len > 1 && digits[len - 1] == 'B')
        digits[--len] = '\0';
      if (len > 1 && strchr (units, g_ascii_toupper (digits[len - 1])) != NULL)
        {
          shift = 10 * (guint)(strchr (units, g_ascii_toupper (digits[len - 1])) - units + 1);
          digits[--len] = '\0';
        }
      if (!g_ascii_string_to_unsigned (digits, 10, 0, G_MAXUINT64 >> shift, &uval, &local_error))
        return invalid (error, pspec, text, local_error->message);
      uval <<= shift;
      if (uval < umin || uval > umax)
        return invalid (error, pspec, text, "out of range");
    }
  else if (is_signed
           ? !g_ascii_string_to_signed (text, 10, smin, smax, &sval, &local_error)
           : !g_ascii_string_to_unsigned (text, 10, umin, umax, &uval, &local_error))
    return invalid (error, pspec, text, local_error->message);

  g_value_init (value, type);
  if (type == G_TYPE_INT)
    g_value_set_int (value, (int)sval);
  else if (type == G_TYPE_LONG)
    g_value_set_long (value, (long)sval);
  else if (type == G_TYPE_INT64)
    g_value_set_int64 (value, sval);
  else if (type == G_TYPE_UINT)
    g_value_set_uint (value, (guint)uval);
  else if (type == G_TYPE_ULONG)
    g_value_set_ulong (value, (gulong)uval);
  else
    g_value_set_uint64 (value, uval);

  return TRUE;
}

static gboolean
parse_double (GParamSpec *pspec,
              const char *text,
              GValue     *value,
              GError    **error)
{
  double min, max, val;
  char *end = NULL;

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    min = G_PARAM_SPEC_DOUBLE (pspec)->minimum, max = G_PARAM_SPEC_DOUBLE (pspec)->maximum;
  else
    min = G_PARAM_SPEC_FLOAT (pspec)->minimum, max = G_PARAM_SPEC_FLOAT (pspec)->maximum;

  val = g_ascii_strtod (text, &end);
  if (*text == '\0' || end == NULL || *end != '\0' || !isfinite (val))
    return invalid (error, pspec, text, "not a number");
  if (val < min || val > max)
    return invalid (error, pspec, text, "out of range");

  g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (pspec));
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    g_value_set_double (value, val);
  else
    g_value_set_float (value, (float)val);

  return TRUE;
}

/* Converts @text to a value of @pspec's type, within @pspec's range, or
 * fails with an error that says what is allowed. @value must be unset
 * (G_VALUE_INIT); it is initialized on success. */
static gboolean
value_from_string (GParamSpec  *pspec,
                   const char  *text,
                   GValue      *value,
                   GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  g_assert (G_IS_PARAM_SPEC (pspec));
  g_assert (text != NULL);

  if (type == G_TYPE_STRING)
    {
      const char *fallback = G_PARAM_SPEC_STRING (pspec)->default_value;

      g_value_init (value, type);
      /* An empty value puts a setting that defaults to "unset" back to it
       * (`cwd=` means the host's cwd again). */
      g_value_set_string (value, (*text == '\0' && fallback == NULL) ? NULL : text);
      return TRUE;
    }

  if (type == G_TYPE_BOOLEAN)
    {
      gboolean b;

      if (!parse_boolean (text, &b))
        return invalid (error, pspec, text, NULL);
      g_value_init (value, type);
      g_value_set_boolean (value, b);
      return TRUE;
    }

  if (type == G_TYPE_INT || type == G_TYPE_UINT || type == G_TYPE_LONG ||
      type == G_TYPE_ULONG || type == G_TYPE_INT64 || type == G_TYPE_UINT64)
    return parse_integer (pspec, text, value, error);

  if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT)
    return parse_double (pspec, text, value, error);

  if (G_TYPE_IS_ENUM (type))
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (type);
      GEnumValue *ev = g_enum_get_value_by_nick (klass, text);

      if (ev == NULL)
        ev = g_enum_get_value_by_name (klass, text);
      if (ev == NULL)
        return invalid (error, pspec, text, NULL);
      g_value_init (value, type);
      g_value_set_enum (value, ev->value);
      return TRUE;
    }

  if (G_TYPE_IS_FLAGS (type))
    {
      g_autoptr(GFlagsClass) klass = g_type_class_ref (type);
      g_auto(GStrv) parts = g_strsplit_set (text, "|,", -1);
      guint flags = 0;

      for (guint i = 0; parts[i] != NULL; i++)
        {
          const char *part = g_strstrip (parts[i]);
          GFlagsValue *fv;

          if (*part == '\0')
            continue;
          fv = g_flags_get_value_by_nick (klass, part);
          if (fv == NULL)
            fv = g_flags_get_value_by_name (klass, part);
          if (fv == NULL)
            return invalid (error, pspec, text, NULL);
          flags |= fv->value;
        }
      g_value_init (value, type);
      g_value_set_flags (value, flags);
      return TRUE;
    }

  if (type == G_TYPE_STRV)
    {
      g_auto(GStrv) list = parse_list (text);

      if (list == NULL)
        return invalid (error, pspec, text, NULL);
      g_value_init (value, type);
      g_value_take_boxed (value, g_steal_pointer (&list));
      return TRUE;
    }

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
               "%s cannot be set from text (its type is %s)",
               g_param_spec_get_name (pspec), g_type_name (type));
  return FALSE;
}

/* What a value of @pspec's type looks like, for error messages. */
static char *
describe_type (GParamSpec *pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

#define RANGE(kind, fmt, cast) \
  if (G_IS_PARAM_SPEC_##kind (pspec)) \
    return g_strdup_printf ("an integer from %" fmt " to %" fmt, \
                            (cast)G_PARAM_SPEC_##kind (pspec)->minimum, \
                            (cast)G_PARAM_SPEC_##kind (pspec)->maximum)
  RANGE (INT, G_GINT64_FORMAT, gint64);
  RANGE (LONG, G_GINT64_FORMAT, gint64);
  RANGE (INT64, G_GINT64_FORMAT, gint64);
  RANGE (UINT, G_GUINT64_FORMAT, guint64);
  RANGE (ULONG, G_GUINT64_FORMAT, guint64);
  RANGE (UINT64, G_GUINT64_FORMAT, guint64);
#undef RANGE

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    return g_strdup_printf ("a number from %g to %g",
                            G_PARAM_SPEC_DOUBLE (pspec)->minimum,
                            G_PARAM_SPEC_DOUBLE (pspec)->maximum);
  if (G_IS_PARAM_SPEC_FLOAT (pspec))
    return g_strdup_printf ("a number from %g to %g",
                            (double)G_PARAM_SPEC_FLOAT (pspec)->minimum,
                            (double)G_PARAM_SPEC_FLOAT (pspec)->maximum);
  if (type == G_TYPE_BOOLEAN)
    return g_strdup ("true or false");
  if (type == G_TYPE_STRING)
    return g_strdup ("a string");
  if (type == G_TYPE_STRV)
    return g_strdup ("a list separated by ';'");

  if (G_TYPE_IS_ENUM (type) || G_TYPE_IS_FLAGS (type))
    {
      g_autoptr(GString) s = g_string_new (G_TYPE_IS_ENUM (type) ? "one of " : "any of ");

      if (G_TYPE_IS_ENUM (type))
        {
          g_autoptr(GEnumClass) klass = g_type_class_ref (type);

          for (guint i = 0; i < klass->n_values; i++)
            g_string_append_printf (s, "%s%s", i ? ", " : "", klass->values[i].value_nick);
        }
      else
        {
          g_autoptr(GFlagsClass) klass = g_type_class_ref (type);

          for (guint i = 0; i < klass->n_values; i++)
            g_string_append_printf (s, "%s%s", i ? ", " : "", klass->values[i].value_nick);
          g_string_append (s, " (joined with '|')");
        }
      return g_string_free (g_steal_pointer (&s), FALSE);
    }

  return g_strdup (g_type_name (type));
}

/* A list in the syntax parse_list() reads: `;` between entries, and a
 * `;` or `\\` inside one escaped. */
static char *
list_to_string (const char * const *list)
{
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; list[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (text, ';');
      for (const char *c = list[i]; *c != '\0'; c++)
        {
          if (*c == ';' || *c == '\\')
            g_string_append_c (text, '\\');
          g_string_append_c (text, *c);
        }
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

/**
 * terret_setting_value_to_string:
 * @value: a value of a setting's type
 *
 * Writes @value as the text [method@Terret.Executor.set_setting] and the
 * configuration file take: a number in the C locale, `true` or `false`,
 * an enumeration's nick, flags' nicks joined with `|`, a list's entries
 * joined with `;` (a `;` or `\\` in one escaped with `\\`), a string as
 * it is.
 *
 * Returns: (transfer full) (nullable): the text, or %NULL for a string or
 *   a list that is unset
 *
 * Since: 0.2
 */
char *
terret_setting_value_to_string (const GValue *value)
{
  GType type;

  g_return_val_if_fail (G_IS_VALUE (value), NULL);

  type = G_VALUE_TYPE (value);
  if (type == G_TYPE_BOOLEAN)
    return g_strdup (g_value_get_boolean (value) ? "true" : "false");
  if (type == G_TYPE_INT)
    return g_strdup_printf ("%d", g_value_get_int (value));
  if (type == G_TYPE_UINT)
    return g_strdup_printf ("%u", g_value_get_uint (value));
  if (type == G_TYPE_LONG)
    return g_strdup_printf ("%ld", g_value_get_long (value));
  if (type == G_TYPE_ULONG)
    return g_strdup_printf ("%lu", g_value_get_ulong (value));
  if (type == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, g_value_get_int64 (value));
  if (type == G_TYPE_UINT64)
    return g_strdup_printf ("%" G_GUINT64_FORMAT, g_value_get_uint64 (value));
  if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT)
    {
      double number = type == G_TYPE_DOUBLE ? g_value_get_double (value)
                                            : g_value_get_float (value);
      char buf[G_ASCII_DTOSTR_BUF_SIZE];

      /* The shortest text that reads back as the same number: 0.1, not
       * the 0.10000000000000001 of g_ascii_dtostr(). */
      g_ascii_formatd (buf, sizeof buf, "%.15g", number);
      if (g_ascii_strtod (buf, NULL) != number)
        g_ascii_dtostr (buf, sizeof buf, number);
      return g_strdup (buf);
    }
  if (type == G_TYPE_STRING)
    return g_value_dup_string (value);
  if (type == G_TYPE_STRV)
    {
      const char * const *list = g_value_get_boxed (value);

      return list != NULL ? list_to_string (list) : NULL;
    }
  if (G_TYPE_IS_ENUM (type))
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (type);
      GEnumValue *ev = g_enum_get_value (klass, g_value_get_enum (value));

      if (ev != NULL)
        return g_strdup (ev->value_nick);
    }
  if (G_TYPE_IS_FLAGS (type))
    {
      g_autoptr(GFlagsClass) klass = g_type_class_ref (type);
      g_autoptr(GString) text = g_string_new (NULL);
      guint flags = g_value_get_flags (value);

      for (guint i = 0; i < klass->n_values; i++)
        if (klass->values[i].value != 0 &&
            (flags & klass->values[i].value) == klass->values[i].value)
          g_string_append_printf (text, "%s%s", text->len > 0 ? "|" : "",
                                  klass->values[i].value_nick);
      return g_string_free (g_steal_pointer (&text), FALSE);
    }

  return g_strdup_value_contents (value);
}

/* --- Applying settings ---------------------------------------------------- */

/**
 * terret_executor_list_settings:
 * @self: an executor
 * @n_settings: (out) (optional): where to store how many there are
 *
 * Lists the backend's settings: the properties that
 * [method@Terret.Executor.set_setting], `--set` and the configuration
 * file's group can set, with their types, ranges, defaults and
 * descriptions.
 *
 * Returns: (array length=n_settings) (transfer container): the settings,
 *   %NULL-terminated
 *
 * Since: 0.2
 */
GParamSpec **
terret_executor_list_settings (TerretExecutor *self,
                               guint          *n_settings)
{
  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);

  return _terret_backend_info_list_type_settings (G_OBJECT_TYPE (self), n_settings);
}

static char *
list_settings (GParamSpec **pspecs)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; pspecs[i] != NULL; i++)
    {
      if (names->len > 0)
        g_string_append (names, ", ");
      g_string_append (names, g_param_spec_get_name (pspecs[i]));
    }

  if (names->len == 0)
    g_string_append (names, "none");

  return g_string_free (g_steal_pointer (&names), FALSE);
}

static GParamSpec *
find_setting (TerretExecutor  *self,
              const char      *key,
              GError         **error)
{
  g_autofree GParamSpec **settings = terret_executor_list_settings (self, NULL);
  g_autofree char *names = NULL;

  for (guint i = 0; settings[i] != NULL; i++)
    if (g_str_equal (g_param_spec_get_name (settings[i]), key))
      return settings[i];

  names = list_settings (settings);
  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
               "the %s backend has no setting “%s”; its settings: %s",
               terret_executor_get_name (self), key, names);
  return NULL;
}

static gboolean
set_value (TerretExecutor  *self,
           GParamSpec      *pspec,
           GValue          *value,
           const char      *text,
           GError         **error)
{
  /* validate() clamps an out-of-range value and says it did; a setting
   * that silently became something else would be worse than an error. */
  if (g_param_value_validate (pspec, value))
    {
      g_autofree char *expected = describe_type (pspec);

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "invalid value “%s” for %s: expected %s",
                   text, g_param_spec_get_name (pspec), expected);
      return FALSE;
    }

  g_object_set_property (G_OBJECT (self), g_param_spec_get_name (pspec), value);
  return TRUE;
}

/**
 * terret_executor_set_setting:
 * @self: an executor
 * @key: a setting's name (a writable property of the backend)
 * @value: its value as text
 *
 * Sets one backend setting from text, converted by the setting's type:
 * numbers within the setting's range, `true`/`false`, an enumeration's
 * nick, a list separated by `;`. An empty value puts a setting whose
 * default is unset back to unset. A live executor applies the new value
 * from its next session on.
 *
 * Returns: %TRUE on success; %FALSE with %TERRET_EXEC_ERROR_INVALID_CONFIG
 *   naming the key and what is allowed
 *
 * Since: 0.1
 */
gboolean
terret_executor_set_setting (TerretExecutor  *self,
                             const char      *key,
                             const char      *value,
                             GError         **error)
{
  g_auto(GValue) gvalue = G_VALUE_INIT;
  GParamSpec *pspec;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((pspec = find_setting (self, key, error)) == NULL)
    return FALSE;

  if (!value_from_string (pspec, value, &gvalue, error))
    return FALSE;

  return set_value (self, pspec, &gvalue, value, error);
}

/**
 * terret_executor_apply_key_file:
 * @self: an executor
 * @key_file: a key file
 * @origin: (nullable): where @key_file came from, for error messages
 *
 * Applies the group of @key_file named after @self's backend (`[pty]`,
 * `[oneshot]`, ...) as settings, in the file's order. A missing group is
 * not an error.
 *
 * Returns: %TRUE on success; %FALSE with %TERRET_EXEC_ERROR_INVALID_CONFIG
 *   naming @origin, the group and the key
 *
 * Since: 0.1
 */
gboolean
terret_executor_apply_key_file (TerretExecutor  *self,
                                GKeyFile        *key_file,
                                const char      *origin,
                                GError         **error)
{
  const char *group;
  g_auto(GStrv) keys = NULL;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (key_file != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (origin == NULL)
    origin = "configuration";

  group = terret_executor_get_name (self);
  if (!g_key_file_has_group (key_file, group))
    return TRUE;

  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_auto(GValue) gvalue = G_VALUE_INIT;
      g_autofree char *text = NULL;
      GParamSpec *pspec;
      gboolean ok;

      /* GKeyFile unescapes strings itself; lists keep their raw syntax so
       * the settings parser reads them as it reads `--set`. */
      pspec = find_setting (self, keys[i], &local_error);
      if (pspec != NULL && G_PARAM_SPEC_VALUE_TYPE (pspec) == G_TYPE_STRV)
        text = g_key_file_get_value (key_file, group, keys[i], &local_error);
      else if (pspec != NULL)
        text = g_key_file_get_string (key_file, group, keys[i], &local_error);

      ok = text != NULL &&
           value_from_string (pspec, text, &gvalue, &local_error) &&
           set_value (self, pspec, &gvalue, text, &local_error);

      if (!ok)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "%s: [%s] %s: %s", origin, group, keys[i], local_error->message);
          return FALSE;
        }
    }

  return TRUE;
}
