// navlog-test-launch PARENT-PID PROGRAM [ARGUMENT...]
//
// Runs PROGRAM in its own place (execvp: same pid, same standard streams) after asking Linux to
// SIGKILL it when PARENT-PID goes away: the test harnesses (NavlogTesting's ProcessRunner and
// DaemonProcess, Tests/support/navlog_stack.py) put it in front of every program a test starts,
// so that a daemon a test started dies with the test process, even when that process is
// killed or crashes and runs no cleanup. Foundation's Process and Python's subprocess cannot run
// code in the child between fork and exec; this program is that code.
//
// Linux sends the signal when the *thread* that forked the child ends, not the process: the
// harnesses start children from a thread that lives as long as the test process.
//
// The death signal is kept across execve (PROGRAM is not set-user-id) and is not inherited by
// PROGRAM's own children. If PARENT-PID is no longer this process's parent (it died before the
// signal was asked for), PROGRAM is not run. Exits 127 when it cannot run PROGRAM.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
    #include <sys/prctl.h>
#endif

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: navlog-test-launch PARENT-PID PROGRAM [ARGUMENT...]\n");
        return 127;
    }
    char *end = NULL;
    errno = 0;
    long parent = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || parent <= 0) {
        fprintf(stderr, "navlog-test-launch: '%s' is no process id\n", argv[1]);
        return 127;
    }
#if defined(__linux__)
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fprintf(stderr, "navlog-test-launch: prctl(PR_SET_PDEATHSIG): %s\n", strerror(errno));
        return 127;
    }
#endif
    // Checked after prctl: a parent that dies from here on sends the signal; one that died
    // before has left this process to another parent.
    if (getppid() != (pid_t)parent) {
        fprintf(stderr, "navlog-test-launch: parent %ld is gone; not running %s\n", parent, argv[2]);
        return 127;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "navlog-test-launch: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
}
