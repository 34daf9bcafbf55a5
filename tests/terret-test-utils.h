/* terret-test-utils.h: what every test program shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

void           terret_test_init                    (int            *argc,
                                                    char         ***argv);
TerretResult  *terret_test_run                     (TerretExecutor *executor,
                                                    TerretRequest  *request,
                                                    GError        **error);
TerretResult  *terret_test_run_command             (TerretExecutor *executor,
                                                    const char     *command,
                                                    GError        **error);
TerretResult  *terret_test_run_in                  (TerretExecutor *executor,
                                                    const char     *session,
                                                    const char     *command,
                                                    double          timeout);
TerretResult  *terret_test_run_ok                  (TerretExecutor *executor,
                                                    const char     *command);
void           terret_test_assert_terminal_run     (TerretExecutor *executor,
                                                    const char     *command,
                                                    int             status,
                                                    const char     *expected);
void           terret_test_assert_bytes_eq         (GBytes         *bytes,
                                                    const char     *expected,
                                                    gssize          expected_len);
guint          terret_test_count_session_members   (GPid            sid);
gboolean       terret_test_process_alive           (GPid            pid);
gboolean       terret_test_process_reaped          (GPid            pid);
char          *terret_test_make_tmpdir             (void);
void           terret_test_give_home               (void);
char          *terret_test_run_argv                (const char * const *argv,
                                                    GError        **error);
void           terret_test_assert_run_fails        (TerretExecutor *executor,
                                                    int             code,
                                                    const char     *needle);
const char    *terret_test_cli_path                (void);
char          *terret_test_make_fifo               (const char     *dir,
                                                    const char     *name);
void           terret_test_write_fifo              (const char     *path,
                                                    const char     *text);
char          *terret_test_read_fifo               (const char     *path);
void           terret_test_wait_gone               (GPid            pid);
void           terret_test_wait_gone_all           (const char     *pids);

void           terret_test_check_head_tail         (TerretExecutor *executor,
                                                    gboolean        separate);
void           terret_test_check_omitted_errors    (TerretExecutor *executor,
                                                    gboolean        separate);
void           terret_test_check_capture_mode      (TerretExecutor *executor,
                                                    TerretCaptureMode mode);

#define terret_test_assert_bytes_str(bytes, str) \
  terret_test_assert_bytes_eq ((bytes), (str), -1)

G_END_DECLS
