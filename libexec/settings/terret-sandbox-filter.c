/* terret-sandbox-filter.c: the system calls a sandboxed command is refused
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Namespaces and a dropped capability set stop most of what a command
 * could do to its host; what they leave open is here, as a seccomp
 * filter bwrap installs before it starts the launcher (`--seccomp`), so
 * the launcher and everything it forks are under it, and no_new_privs
 * (which bwrap sets) keeps any of them from shedding it.
 *
 * libseccomp writes the BPF: it knows each ABI's numbers and argument
 * layout, and the i386 socketcall multiplexer, which a hand-written
 * program would have to get right three times over.
 *
 * Refusals return an errno (the command sees an ordinary error and says
 * so), never a kill: a refused call must read as a refusal, not a crash.
 */

#include "config.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "terret-error.h"
#include "terret-sandbox-filter-private.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

typedef struct
{
  const char *name;
  int errnum;
  const char *why;
} Refusal;

/* Refused outright under a filesystem sandbox, each for what the
 * namespaces and --cap-drop leave open. Written for this sandbox (its
 * launcher is the PID namespace's init, every capability is dropped);
 * Flatpak's and Docker's default profiles were read for what they cover,
 * not copied. Calls that need a capability and nothing else (module
 * loading, reboot, kexec, raw I/O) are stopped by --cap-drop already, and
 * nothing here can get a capability back once user namespaces are refused
 * below. */
static const Refusal refusals[] = {
  /* The kernel's keyrings are not in any namespace bwrap makes: root's
   * user keyring inside is the host root's, and another uid's the same. */
  { "keyctl", EPERM, "the user keyrings are the host's" },
  { "add_key", EPERM, "the user keyrings are the host's" },
  { "request_key", EPERM, "the user keyrings are the host's (and it can call out to a host helper)" },
  /* Programs and maps in the kernel itself, where unprivileged BPF is on. */
  { "bpf", EPERM, "loads programs into the host's kernel" },
  /* Observes the host's kernel and other processes; a long line of
   * kernel bugs. */
  { "perf_event_open", EPERM, "observes the host's kernel" },
  /* Into another process's memory: the launcher, the sandbox's init,
   * holds the library's end of its socket. */
  { "ptrace", EPERM, "takes over another process (the launcher included)" },
  { "process_vm_readv", EPERM, "reads another process's memory" },
  { "process_vm_writev", EPERM, "writes another process's memory" },
  { "pidfd_getfd", EPERM, "takes a descriptor out of another process" },
  /* The mount table is what keeps the filesystem read-only; inside a
   * user namespace these would work on a copy of it. */
  { "mount", EPERM, "reshapes the mounts the sandbox is made of" },
  { "umount2", EPERM, "uncovers what the sandbox mounts over (hidden paths)" },
  { "pivot_root", EPERM, "changes the root" },
  { "chroot", EPERM, "changes the root" },
  { "open_tree", EPERM, "the new mount API" },
  { "move_mount", EPERM, "the new mount API" },
  { "fsopen", EPERM, "the new mount API" },
  { "fsconfig", EPERM, "the new mount API" },
  { "fsmount", EPERM, "the new mount API" },
  { "fspick", EPERM, "the new mount API" },
  { "mount_setattr", EPERM, "makes a read-only mount writable" },
  /* New namespaces: a user namespace hands every capability back inside
   * it, and each namespace is kernel surface no command needs. */
  { "unshare", EPERM, "makes new namespaces (a user namespace gives capabilities back)" },
  { "setns", EPERM, "enters another namespace" },
  /* Its flags are behind a pointer, which a filter cannot read: ENOSYS,
   * so the C library falls back to clone(), whose flags are checked. */
  { "clone3", ENOSYS, "its namespace flags cannot be read; libc falls back to clone" },
  /* io_uring runs socket(), connect() and openat() without the system
   * calls this filter sees. */
  { "io_uring_setup", EPERM, "performs socket and file operations this filter never sees" },
  { "io_uring_enter", EPERM, "performs socket and file operations this filter never sees" },
  { "io_uring_register", EPERM, "performs socket and file operations this filter never sees" },
  /* Stalls the kernel on a page fault at a moment of the caller's
   * choosing: the tool that turns kernel races into exploits. */
  { "userfaultfd", EPERM, "holds the kernel mid-copy, for exploiting races" },
  /* Watches and marks host filesystems beyond the sandbox's view. */
  { "fanotify_init", EPERM, "watches filesystems as a whole" },
  /* The host's files by handle, around every path-based check. */
  { "open_by_handle_at", EPERM, "opens host files by handle, around the mounts" },
};

/* Namespace flags of clone(), refused for unshare()'s reason. */
static const unsigned long clone_namespaces[] = {
  CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
  CLONE_NEWNET, CLONE_NEWTIME,
};

/* Terminal ioctls that push bytes into a terminal's input: the pty a
 * session's shell reads its next command from. ioctl's request is an int:
 * only its low 32 bits are compared, so junk above them cannot slip by. */
static const unsigned long terminal_injections[] = { TIOCSTI, TIOCLINUX };

static int
add_refusals (scmp_filter_ctx ctx)
{
  int ret;

  for (gsize i = 0; i < G_N_ELEMENTS (refusals); i++)
    {
      int nr = seccomp_syscall_resolve_name (refusals[i].name);

      /* A call this libseccomp does not know is one this build cannot
       * name: the sandbox is refused rather than built without it. */
      if (nr == __NR_SCMP_ERROR)
        return -ENOSYS;
      if ((ret = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (refusals[i].errnum), nr, 0)) < 0)
        return ret;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (clone_namespaces); i++)
    if ((ret = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1,
                                 SCMP_A0 (SCMP_CMP_MASKED_EQ, clone_namespaces[i],
                                          clone_namespaces[i]))) < 0)
      return ret;

  for (gsize i = 0; i < G_N_ELEMENTS (terminal_injections); i++)
    if ((ret = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (ioctl), 1,
                                 SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu,
                                          terminal_injections[i]))) < 0)
      return ret;

  return 0;
}

/* With the network off the network namespace leaves only loopback IP,
 * but not every family lives in a network namespace: AF_UNIX path
 * sockets are files on the host's filesystem, AF_VSOCK reaches the
 * hypervisor and its other guests. Only the families a network namespace
 * does bound are left: IPv4, IPv6 and netlink (which tools need to see
 * the loopback device); AF_UNIX too when allow-unix-sockets asks. The
 * family is an int: a value with junk in its upper 32 bits is refused by
 * the >= rule, the safe side. */
static int
add_socket_families (scmp_filter_ctx ctx,
                     gboolean        allow_unix)
{
  int ret;

  for (int family = AF_UNSPEC; family < AF_NETLINK; family++)
    {
      if (family == AF_INET || family == AF_INET6 || (allow_unix && family == AF_UNIX))
        continue;
      if ((ret = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EAFNOSUPPORT), SCMP_SYS (socket), 1,
                                   SCMP_A0 (SCMP_CMP_EQ, family))) < 0)
        return ret;
    }
  return seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EAFNOSUPPORT), SCMP_SYS (socket), 1,
                           SCMP_A0 (SCMP_CMP_GE, AF_NETLINK + 1));
}

/* The 32-bit ABI of the native one, if any: its programs run too, and
 * must meet the same filter. */
static uint32_t
compat_arch (void)
{
  switch (seccomp_arch_native ())
    {
    case SCMP_ARCH_X86_64:
      return SCMP_ARCH_X86;
    case SCMP_ARCH_AARCH64:
      return SCMP_ARCH_ARM;
    default:
      return 0;
    }
}

/* Any ABI not named is killed on its first call rather than let through
 * unfiltered: the whole process where libseccomp knows the kernel has
 * that action, else the calling thread (libseccomp asks the running
 * kernel, and a tool in between, such as valgrind, may not answer). */
static int
set_bad_arch_action (scmp_filter_ctx ctx)
{
  int ret = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

  if (ret == -EINVAL)
    ret = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL);
  return ret;
}

static int
build (TerretSandboxFilter   flags,
       GBytes              **out)
{
  scmp_filter_ctx ctx = NULL;
  scmp_filter_ctx compat = NULL;
  uint32_t compat_id = compat_arch ();
  int memfd = -1;
  off_t size;
  int ret;

  ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return -ENOMEM;
  if ((ret = set_bad_arch_action (ctx)) < 0)
    goto out;
  /* x32 shares x86_64's argument layout; added (where the kernel lacks
   * it, its calls simply never come) so its numbers meet the same rules. */
  if (seccomp_arch_native () == SCMP_ARCH_X86_64 &&
      (ret = seccomp_arch_add (ctx, SCMP_ARCH_X32)) < 0)
    goto out;

  if ((flags & TERRET_SANDBOX_FILTER_ESCAPES) && (ret = add_refusals (ctx)) < 0)
    goto out;
  if ((flags & TERRET_SANDBOX_FILTER_NETWORK) &&
      (ret = add_socket_families (ctx, (flags & TERRET_SANDBOX_FILTER_ALLOW_UNIX) != 0)) < 0)
    goto out;

  if (compat_id != 0)
    {
      /* The compat ABI in a context of its own, merged in, for its socket
       * rule: on i386, libseccomp writes a rule on socket() with an
       * argument also as one on socketcall(), comparing the argument with
       * the *call number*, since socketcall's arguments are behind a
       * pointer no filter can read. So there the rule takes no argument:
       * with the network off, socket() is refused whatever the family
       * (even under allow-unix-sockets), through both entries, and
       * socketpair(), a call number of its own, still works. */
      compat = seccomp_init (SCMP_ACT_ALLOW);
      if (compat == NULL)
        {
          ret = -ENOMEM;
          goto out;
        }
      if ((ret = seccomp_arch_remove (compat, SCMP_ARCH_NATIVE)) < 0 ||
          (ret = seccomp_arch_add (compat, compat_id)) < 0 ||
          (ret = set_bad_arch_action (compat)) < 0)
        goto out;
      if ((flags & TERRET_SANDBOX_FILTER_ESCAPES) && (ret = add_refusals (compat)) < 0)
        goto out;
      if ((flags & TERRET_SANDBOX_FILTER_NETWORK) &&
          (ret = seccomp_rule_add (compat, SCMP_ACT_ERRNO (EAFNOSUPPORT), SCMP_SYS (socket), 0)) < 0)
        goto out;
      if ((ret = seccomp_merge (ctx, compat)) < 0)
        goto out;
      compat = NULL;            /* merged: freed with ctx */
    }

  memfd = memfd_create ("terret-seccomp", MFD_CLOEXEC);
  if (memfd < 0)
    {
      ret = -errno;
      goto out;
    }
  if ((ret = seccomp_export_bpf (ctx, memfd)) < 0)
    goto out;
  size = lseek (memfd, 0, SEEK_END);
  if (size <= 0)
    {
      ret = -EIO;
      goto out;
    }
  {
    g_autofree guint8 *program = g_malloc (size);

    if (pread (memfd, program, size, 0) != size)
      {
        ret = -EIO;
        goto out;
      }
    *out = g_bytes_new_take (g_steal_pointer (&program), size);
  }
  ret = 0;

out:
  if (memfd >= 0)
    close (memfd);
  if (compat != NULL)
    seccomp_release (compat);
  seccomp_release (ctx);
  return ret;
}

/*
 * _terret_sandbox_filter_get:
 *
 * The BPF program for @flags, as bwrap's --seccomp reads it. Made once
 * per set of flags and kept for the life of the process: a sandbox
 * starts a launcher per policy, and the program never changes.
 *
 * Returns: (transfer full): the program, or %NULL with
 *   %TERRET_EXEC_ERROR_UNAVAILABLE when it cannot be made.
 */
GBytes *
_terret_sandbox_filter_get (TerretSandboxFilter   flags,
                            GError              **error)
{
  static GBytes *programs[TERRET_SANDBOX_FILTER_ALL + 1];
  G_LOCK_DEFINE_STATIC (programs);
  GBytes *program;
  int ret = 0;

  g_return_val_if_fail (flags != 0 && flags <= TERRET_SANDBOX_FILTER_ALL, NULL);

  G_LOCK (programs);
  if (programs[flags] == NULL)
    ret = build (flags, &programs[flags]);
  program = programs[flags] != NULL ? g_bytes_ref (programs[flags]) : NULL;
  G_UNLOCK (programs);

  if (program == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                 "Could not make the sandbox's seccomp filter: %s", g_strerror (-ret));
  return program;
}
