"""Write the bot seccomp filter as BPF to stdout. Runs under Debian's /usr/bin/python3, where
python3-seccomp (libseccomp's binding) lives; the project's virtualenv does not see system
packages, so `arena.sandbox.seccomp` runs this file in a helper process (stdlib + seccomp only).

Default action: allow. Denied (EPERM unless noted): sockets other than AF_UNIX (EAFNOSUPPORT),
ptrace and cross-process memory access, namespaces (unshare, setns, clone with CLONE_NEW*; clone3
answers ENOSYS so libc falls back to clone, whose flags can be inspected), mounts, io_uring (it can
open sockets without the socket syscall), BPF, perf, keyrings, POSIX message queues, kernel modules, reboot and similar.
"""

import errno
import socket
import sys

import seccomp

DENY = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "mq_open",  # POSIX message queues live in the IPC namespace, which a warm zygote's children share
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "vhangup",
)
CLONE_NEW = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
TIOCSTI = 0x5412


def build(out) -> None:
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for call in ("socket", "socketpair"):
        f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), call, seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    for name in DENY:
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            pass  # a syscall this architecture or libseccomp does not know
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in CLONE_NEW:
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.EPERM), "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
    f.export_bpf(out)


if __name__ == "__main__":
    build(sys.stdout)
