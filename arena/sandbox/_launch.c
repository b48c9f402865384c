/* The bwrap launch chain's helper (arena/sandbox/launch_helper.py builds it; docs/sandbox.md "bwrap").
 *
 * One exec instead of the chain setpriv --pdeathsig -> sh (parent check) -> sh (cgroup join) -> prlimit,
 * and, run again inside the sandbox, instead of setpriv --reuid. Each step in the order the chain
 * took them, then exec. Plain C and libc, no allocation; the environment is passed on untouched
 * (it holds the seat token, which never goes on a command line).
 *
 *   _arena_launch [--parent PID] [--join FILE]... [--rlimit NAME=SOFT:HARD]... [--uid UID] -- PROG ARGS...
 *
 * --parent PID   PR_SET_PDEATHSIG SIGKILL, then exit 137 unless the parent is still PID (had it
 *                died before the signal was set, this process was reparented and never told).
 * --join FILE    write this process's pid into FILE, a cgroup's cgroup.procs (exit 125 on failure).
 * --rlimit       setrlimit; NAME is as, cpu, fsize, nofile, core or nproc.
 * --uid UID      as `setpriv --reuid=UID --regid=UID --clear-groups --inh-caps=-all
 *                --bounding-set=-all`: no supplementary group, gid and uid UID, every capability
 *                set empty (bounding, inheritable; effective, permitted and ambient by the uid change).
 * Exit 126 when an option cannot be applied, 127 when PROG cannot be executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(int status, const char *what, const char *arg) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "arena-launch: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "",
                     strerror(errno));
    if (n > 0) {
        ssize_t ignored = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
        (void)ignored;
    }
    _exit(status);
}

/* A decimal number at `s` ending at the character `stop`; the end, or NULL when it is not one. */
static const char *number(const char *s, char stop, unsigned long long *out) {
    char *end;
    if (*s < '0' || *s > '9')
        return NULL;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return (errno || *end != stop) ? NULL : end;
}

static int resource_of(const char *name, size_t len) {
    static const struct {
        const char *name;
        int resource;
    } table[] = {{"as", RLIMIT_AS},         {"cpu", RLIMIT_CPU},   {"fsize", RLIMIT_FSIZE},
                 {"nofile", RLIMIT_NOFILE}, {"core", RLIMIT_CORE}, {"nproc", RLIMIT_NPROC}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0)
            return table[i].resource;
    return -1;
}

static void set_rlimit(const char *spec) {
    const char *eq = strchr(spec, '=');
    unsigned long long soft, hard;
    int resource = eq ? resource_of(spec, (size_t)(eq - spec)) : -1;
    const char *colon = resource < 0 ? NULL : number(eq + 1, ':', &soft);
    if (colon == NULL || number(colon + 1, '\0', &hard) == NULL || soft > hard) {
        errno = EINVAL;
        die(126, "bad --rlimit", spec);
    }
    struct rlimit rl = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
    if (setrlimit(resource, &rl) != 0)
        die(126, "setrlimit", spec);
}

static void join(const char *path) {
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, pid, (size_t)n) != n)
        die(125, "cannot join", path);
    close(fd);
}

static void become(uid_t uid) {
    if (setgroups(0, NULL) != 0)
        die(126, "setgroups", NULL);
    if (setresgid(uid, uid, uid) != 0)
        die(126, "setresgid", NULL);
    for (int cap = 0; cap < 64; cap++) { /* needs CAP_SETPCAP: before the uid changes */
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
            break; /* past the kernel's last capability */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
            die(126, "PR_CAPBSET_DROP", NULL);
    }
    if (setresuid(uid, uid, uid) != 0) /* all three non-zero: effective, permitted, ambient cleared */
        die(126, "setresuid", NULL);
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) /* the inheritable set survives the uid change */
        die(126, "capset", NULL);
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long n;
        if (val == NULL) {
            errno = EINVAL;
            die(126, "missing value for", opt);
        }
        i++;
        if (strcmp(opt, "--parent") == 0) {
            if (number(val, '\0', &n) == NULL) {
                errno = EINVAL;
                die(126, "bad --parent", val);
            }
            if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
                die(126, "PR_SET_PDEATHSIG", NULL);
            if ((unsigned long long)getppid() != n)
                _exit(137);
        } else if (strcmp(opt, "--join") == 0) {
            join(val);
        } else if (strcmp(opt, "--rlimit") == 0) {
            set_rlimit(val);
        } else if (strcmp(opt, "--uid") == 0) {
            if (number(val, '\0', &n) == NULL || n == 0 || n > 0x7fffffffULL) {
                errno = EINVAL;
                die(126, "bad --uid", val);
            }
            become((uid_t)n);
        } else {
            errno = EINVAL;
            die(126, "unknown option", opt);
        }
    }
    if (i + 1 >= argc) {
        errno = EINVAL;
        die(126, "no command after --", NULL);
    }
    execvp(argv[i + 1], argv + i + 1); /* PATH, as setpriv: a bundle's `run` may be `python3 bot.py` */
    die(127, "cannot execute", argv[i + 1]);
    return 127;
}
