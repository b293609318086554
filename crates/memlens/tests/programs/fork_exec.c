/* The child of a fork allocates, then replaces itself with this same
 * program in "exec-child" mode, which allocates again. argv[1] chooses the
 * exec function: "execv", "execl", or "execle" with an empty environment
 * (so the new image runs without the recorder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        for (int i = 0; i < 500; i++) free(malloc(100 + (size_t)i));
        printf("exec child done\n");
        return 3;
    }
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 300; i++) free(malloc(200));
        if (argc > 1 && strcmp(argv[1], "execl") == 0) {
            execl(argv[0], argv[0], "exec-child", (char *)NULL);
        } else if (argc > 1 && strcmp(argv[1], "execle") == 0) {
            char *no_environment[] = {NULL};
            execle(argv[0], argv[0], "exec-child", (char *)NULL, no_environment);
        } else {
            char *child_argv[] = {argv[0], "exec-child", NULL};
            execv(argv[0], child_argv);
        }
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited with %d\n", WEXITSTATUS(status));
    return 0;
}
