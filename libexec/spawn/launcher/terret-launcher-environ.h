/* terret-launcher-environ.h: a far side's requests, made whole here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A request from a library whose processes run elsewhere (a container, a
 * Flatpak app's host) carries only what it adds to the environment there,
 * and may name its program without a slash: the far launcher, which runs
 * there, completes both.
 */

#pragma once

/* @extra (NULL-terminated) over this process's own environment, an entry
 * of @extra replacing one of the same name. The strings are borrowed;
 * the array is the caller's to free. NULL when out of memory. */
char **launcher_merge_environ (char **extra);

/* @name looked up in the PATH of @envp (or the usual one of a Linux image
 * when it has none), as execvp would: an allocated path, or NULL with
 * errno set. */
char  *launcher_find_program  (const char  *name,
                               char       **envp);
