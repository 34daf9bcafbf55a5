/* terret-escape-probe.c: one attempt to get out of a sandbox, for test-sandbox
 *
 *   terret-escape-probe ATTEMPT [ARG...]
 *
 * Each attempt is a real one, aimed at a target the test made for it,
 * and prints one line: `escaped: DETAIL` when it worked, `refused: WHY`
 * (the errno's words) when it did not. The exit status is 0 for escaped,
 * 1 for refused, 2 for a usage error. Plain C, so the tests depend on no
 * interpreter; the system calls are made directly where the C library
 * has no wrapper (keyrings, io_uring, the i386 entry).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/vm_sockets.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* Under AddressSanitizer builds: the leak check at exit ptraces the
 * process, which the sandbox refuses; a probe has nothing to leak. */
int __lsan_is_turned_off (void);
int
__lsan_is_turned_off (void)
{
  return 1;
}

static int
escaped (const char *what,
         const char *detail)
{
  printf ("escaped: %s%s\n", what, detail != NULL ? detail : "");
  return 0;
}

static int
refused (const char *what)
{
  printf ("refused: %s: %s\n", what, strerror (errno));
  return 1;
}

/* Reads what a listener says on @fd, for the proof that it answered. */
static int
read_answer (int         fd,
             const char *target)
{
  char buffer[256];
  ssize_t n = read (fd, buffer, sizeof buffer - 1);

  if (n < 0)
    return refused ("read");
  buffer[n] = '\0';
  buffer[strcspn (buffer, "\n")] = '\0';
  printf ("escaped: %s answered %s\n", target, buffer);
  return 0;
}

static int
unix_address (const char         *name,
              int                 abstract,
              struct sockaddr_un *address)
{
  size_t n = strlen (name);

  memset (address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  if (n + 1 > sizeof address->sun_path)
    return -1;
  memcpy (address->sun_path + (abstract ? 1 : 0), name, n);
  return (int)(offsetof (struct sockaddr_un, sun_path) + n + (abstract ? 1 : 1));
}

/* connect PATH | connect-abstract NAME: a unix socket the test listens on. */
static int
attempt_connect (const char *name,
                 int         abstract)
{
  struct sockaddr_un address;
  int len = unix_address (name, abstract, &address);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return refused ("socket(AF_UNIX)");
  if (connect (fd, (struct sockaddr *)&address, len) < 0)
    return refused ("connect");
  return read_answer (fd, name);
}

/* connect-all FILE: every path in FILE (one a line), the host's
 * listening sockets; escaped when any one accepts. */
static int
attempt_connect_all (const char *list)
{
  FILE *f = fopen (list, "re");
  char line[4096];
  int tried = 0, reached = 0;
  int first_errno = 0;

  if (f == NULL)
    return refused (list);
  while (fgets (line, sizeof line, f) != NULL)
    {
      struct sockaddr_un address;
      int len, fd;

      line[strcspn (line, "\n")] = '\0';
      if (line[0] == '\0' || (len = unix_address (line, 0, &address)) < 0)
        continue;
      tried++;
      fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0)
        {
          first_errno = first_errno ? first_errno : errno;
          continue;
        }
      if (connect (fd, (struct sockaddr *)&address, len) == 0 || errno == EINPROGRESS ||
          errno == EAGAIN)
        {
          printf ("reached %s\n", line);
          reached++;
        }
      else
        first_errno = first_errno ? first_errno : errno;
      close (fd);
    }
  fclose (f);
  if (reached > 0)
    {
      printf ("escaped: %d of %d host sockets reached\n", reached, tried);
      return 0;
    }
  errno = first_errno;
  printf ("refused: none of %d host sockets reached: %s\n", tried, strerror (errno));
  return 1;
}

/* io-uring-connect PATH: the socket made by io_uring (IORING_OP_SOCKET),
 * which a filter on socket() never sees, then connected as usual. */
static int
attempt_io_uring_connect (const char *path)
{
  struct io_uring_params params;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqe;
  unsigned *sq_tail, *sq_array, *cq_head;
  void *sq_ring, *cq_ring;
  struct sockaddr_un address;
  int ring, len, fd;

  memset (&params, 0, sizeof params);
  ring = (int)syscall (__NR_io_uring_setup, 1, &params);
  if (ring < 0)
    return refused ("io_uring_setup");
  sq_ring = mmap (NULL, params.sq_off.array + params.sq_entries * sizeof (unsigned),
                  PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
  cq_ring = mmap (NULL, params.cq_off.cqes + params.cq_entries * sizeof (struct io_uring_cqe),
                  PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
  sqes = mmap (NULL, params.sq_entries * sizeof (struct io_uring_sqe), PROT_READ | PROT_WRITE,
               MAP_SHARED, ring, IORING_OFF_SQES);
  if (sq_ring == MAP_FAILED || cq_ring == MAP_FAILED || sqes == MAP_FAILED)
    return refused ("mmap of the rings");

  sq_tail = (unsigned *)((char *)sq_ring + params.sq_off.tail);
  sq_array = (unsigned *)((char *)sq_ring + params.sq_off.array);
  cq_head = (unsigned *)((char *)cq_ring + params.cq_off.head);
  cqe = (struct io_uring_cqe *)((char *)cq_ring + params.cq_off.cqes);

  memset (&sqes[0], 0, sizeof sqes[0]);
  sqes[0].opcode = IORING_OP_SOCKET;
  sqes[0].fd = AF_UNIX;
  sqes[0].off = SOCK_STREAM;
  sq_array[0] = 0;
  __atomic_store_n (sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
  if (syscall (__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
    return refused ("io_uring_enter");
  fd = cqe[*cq_head & (params.cq_entries - 1)].res;
  if (fd < 0)
    {
      errno = -fd;
      return refused ("IORING_OP_SOCKET");
    }

  len = unix_address (path, 0, &address);
  if (connect (fd, (struct sockaddr *)&address, len) < 0)
    return refused ("connect");
  return read_answer (fd, path);
}

#if defined(__x86_64__)
/* socket-i386: socket(AF_UNIX) through the i386 entry (int 0x80), both
 * as socketcall(SYS_SOCKET) and as the direct call, whose numbers and
 * seccomp architecture differ from x86_64's. */
static long
i386_syscall (long nr,
              long a,
              long b,
              long c)
{
  long ret;

  __asm__ volatile ("int $0x80"
                    : "=a" (ret)
                    : "a" (nr), "b" (a), "c" (b), "d" (c)
                    : "memory");
  return ret;
}

static int
attempt_socket_i386 (void)
{
  /* socketcall reads its arguments through a 32-bit pointer. */
  unsigned int *args = mmap (NULL, 4096, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  long via_socketcall, direct;

  if (args == MAP_FAILED)
    return refused ("mmap below 4 GiB");
  args[0] = AF_UNIX, args[1] = SOCK_STREAM, args[2] = 0;
  via_socketcall = i386_syscall (102, 1 /* SYS_SOCKET */, (long)(unsigned long)args, 0);
  direct = i386_syscall (359, AF_UNIX, SOCK_STREAM, 0);
  if (via_socketcall >= 0 || direct >= 0)
    {
      printf ("escaped: i386 socket(AF_UNIX): socketcall %ld, direct %ld\n", via_socketcall, direct);
      return 0;
    }
  errno = (int)-via_socketcall;
  return refused ("i386 socketcall(SYS_SOCKET) and socket (AF_UNIX)");
}
#endif

/* vsock: the hypervisor's side of a virtual machine, in no namespace. */
static int
attempt_vsock (void)
{
  int fd = socket (AF_VSOCK, SOCK_STREAM, 0);

  if (fd < 0)
    return refused ("socket(AF_VSOCK)");
  return escaped ("an AF_VSOCK socket", NULL);
}

/* keyring DESCRIPTION: a key the test put in its user keyring. */
static int
attempt_keyring (const char *description)
{
  char payload[256];
  long serial, n;

  serial = syscall (__NR_keyctl, 10 /* KEYCTL_SEARCH */, -4 /* KEY_SPEC_USER_KEYRING */,
                    "user", description, 0);
  if (serial < 0)
    return refused ("keyctl(KEYCTL_SEARCH)");
  n = syscall (__NR_keyctl, 11 /* KEYCTL_READ */, serial, payload, sizeof payload - 1);
  if (n < 0)
    return refused ("keyctl(KEYCTL_READ)");
  payload[n < (long)sizeof payload - 1 ? n : (long)sizeof payload - 1] = '\0';
  return escaped ("read the host's key: ", payload);
}

/* bpf: a map in the kernel. */
static int
attempt_bpf (void)
{
  union bpf_attr attr;
  int fd;

  memset (&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  fd = (int)syscall (__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0)
    return refused ("bpf(BPF_MAP_CREATE)");
  return escaped ("a BPF map in the kernel", NULL);
}

/* perf: a counter on the probe itself, user space only (what the most
 * paranoid setting below 3 still grants). */
static int
attempt_perf (void)
{
  struct perf_event_attr attr;
  int fd;

  memset (&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  fd = (int)syscall (__NR_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0)
    return refused ("perf_event_open");
  return escaped ("a perf event", NULL);
}

/* kill PID: the test's target process, SIGKILLed. */
static int
attempt_kill (const char *pid)
{
  if (kill (atoi (pid), SIGKILL) < 0)
    return refused ("kill");
  return escaped ("killed ", pid);
}

/* ptrace PID: attached to the test's target process, then let go. */
static int
attempt_ptrace (const char *pid_text)
{
  pid_t pid = atoi (pid_text);

  if (ptrace (PTRACE_SEIZE, pid, NULL, NULL) < 0)
    return refused ("ptrace(PTRACE_SEIZE)");
  ptrace (PTRACE_DETACH, pid, NULL, NULL);
  return escaped ("attached to ", pid_text);
}

/* tiocsti: input pushed into a terminal, read back from it. The probe's
 * own pty, made its controlling terminal in a session of its own, so
 * the ioctl needs no privilege and touches no terminal of anyone else's:
 * what is tested is that the ioctl is refused, whichever terminal. */
static int
attempt_tiocsti (void)
{
  int master = posix_openpt (O_RDWR | O_NOCTTY);
  int pipefd[2];
  pid_t child;
  char result[256] = "";
  ssize_t n;
  int status;

  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0 || pipe (pipefd) < 0)
    return refused ("a pty");
  child = fork ();
  if (child == 0)
    {
      char c = 'x', got[8] = "";
      int slave;

      setsid ();
      slave = open (ptsname (master), O_RDWR);     /* becomes the controlling terminal */
      if (slave < 0)
        dprintf (pipefd[1], "refused: open: %s", strerror (errno));
      else if (ioctl (slave, TIOCSTI, &c) < 0)
        dprintf (pipefd[1], "refused: ioctl(TIOCSTI): %s", strerror (errno));
      else
        {
          struct termios raw;

          tcgetattr (slave, &raw);
          cfmakeraw (&raw);
          tcsetattr (slave, TCSANOW, &raw);
          if (read (slave, got, 1) == 1 && got[0] == 'x')
            dprintf (pipefd[1], "escaped: input pushed into a terminal");
          else
            dprintf (pipefd[1], "refused: nothing arrived");
        }
      _exit (0);
    }
  close (pipefd[1]);
  n = read (pipefd[0], result, sizeof result - 1);
  waitpid (child, &status, 0);
  result[n > 0 ? n : 0] = '\0';
  printf ("%s\n", result);
  return strncmp (result, "escaped", 7) == 0 ? 0 : 1;
}

/* mount DIR: a tmpfs on the test's directory (then unmounted); where the
 * probe has no privilege, from a user namespace of its own. */
static int
attempt_mount (const char *dir)
{
  if (mount ("terret-probe", dir, "tmpfs", 0, NULL) < 0)
    {
      if (errno != EPERM || geteuid () == 0)
        return refused ("mount");
      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return refused ("unshare(CLONE_NEWUSER|CLONE_NEWNS) for mount");
      if (mount ("terret-probe", dir, "tmpfs", 0, NULL) < 0)
        return refused ("mount in a user namespace");
    }
  umount2 (dir, MNT_DETACH);
  return escaped ("mounted a tmpfs on ", dir);
}

/* unshare: a user namespace, where every capability comes back. */
static int
attempt_unshare (void)
{
  if (unshare (CLONE_NEWUSER) < 0)
    return refused ("unshare(CLONE_NEWUSER)");
  return escaped ("a new user namespace", NULL);
}

/* clone-newuser: the same through clone(). */
static int
attempt_clone_newuser (void)
{
  pid_t pid = (pid_t)syscall (__NR_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
  int status;

  if (pid < 0)
    return refused ("clone(CLONE_NEWUSER)");
  if (pid == 0)
    _exit (0);
  waitpid (pid, &status, 0);
  return escaped ("a child in a new user namespace", NULL);
}

/* setns PATH: into a namespace of the test's process, such as its
 * network namespace (/proc/PID/ns/net). */
static int
attempt_setns (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return refused (path);
  if (setns (fd, 0) < 0)
    return refused ("setns");
  return escaped ("entered ", path);
}

/* euid: what a setuid copy of the probe runs as. */
static int
attempt_euid (void)
{
  printf ("%s: euid %d\n", geteuid () != getuid () ? "escaped" : "refused", (int)geteuid ());
  return geteuid () != getuid () ? 0 : 1;
}

/* mqueue NAME: a POSIX message queue the test made, and its message. */
static int
attempt_mqueue (const char *name)
{
  char message[8192];
  mqd_t queue = mq_open (name, O_RDONLY | O_NONBLOCK);
  ssize_t n;

  if (queue == (mqd_t)-1)
    return refused ("mq_open");
  n = mq_receive (queue, message, sizeof message, NULL);
  if (n < 0)
    return refused ("mq_receive");
  message[n] = '\0';
  return escaped ("read the host's queue: ", message);
}

/* sysv-shm KEY: a System V shared memory segment the test made. */
static int
attempt_sysv_shm (const char *key)
{
  int id = shmget ((key_t)strtol (key, NULL, 0), 0, 0);
  char *data;

  if (id < 0)
    return refused ("shmget");
  data = shmat (id, NULL, SHM_RDONLY);
  if (data == (void *)-1)
    return refused ("shmat");
  return escaped ("read the host's segment: ", data);
}

int
main (int    argc,
      char **argv)
{
  const char *attempt = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : NULL;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (strcmp (attempt, "connect") == 0 && arg != NULL)
    return attempt_connect (arg, 0);
  if (strcmp (attempt, "connect-abstract") == 0 && arg != NULL)
    return attempt_connect (arg, 1);
  if (strcmp (attempt, "connect-all") == 0 && arg != NULL)
    return attempt_connect_all (arg);
  if (strcmp (attempt, "io-uring-connect") == 0 && arg != NULL)
    return attempt_io_uring_connect (arg);
#if defined(__x86_64__)
  if (strcmp (attempt, "socket-i386") == 0)
    return attempt_socket_i386 ();
#endif
  if (strcmp (attempt, "vsock") == 0)
    return attempt_vsock ();
  if (strcmp (attempt, "keyring") == 0 && arg != NULL)
    return attempt_keyring (arg);
  if (strcmp (attempt, "bpf") == 0)
    return attempt_bpf ();
  if (strcmp (attempt, "perf") == 0)
    return attempt_perf ();
  if (strcmp (attempt, "kill") == 0 && arg != NULL)
    return attempt_kill (arg);
  if (strcmp (attempt, "ptrace") == 0 && arg != NULL)
    return attempt_ptrace (arg);
  if (strcmp (attempt, "tiocsti") == 0)
    return attempt_tiocsti ();
  if (strcmp (attempt, "mount") == 0 && arg != NULL)
    return attempt_mount (arg);
  if (strcmp (attempt, "unshare") == 0)
    return attempt_unshare ();
  if (strcmp (attempt, "clone-newuser") == 0)
    return attempt_clone_newuser ();
  if (strcmp (attempt, "setns") == 0 && arg != NULL)
    return attempt_setns (arg);
  if (strcmp (attempt, "euid") == 0)
    return attempt_euid ();
  if (strcmp (attempt, "mqueue") == 0 && arg != NULL)
    return attempt_mqueue (arg);
  if (strcmp (attempt, "sysv-shm") == 0 && arg != NULL)
    return attempt_sysv_shm (arg);

  fprintf (stderr, "usage: %s ATTEMPT [ARG]: see the source for the attempts\n", argv[0]);
  return 2;
}
