#include "CSwitchyardStdio.h"
#include <stdio.h>

void switchyard_redirect_stdout_to_stderr(void) {
    fflush(stdout);
    // glibc's stdin/stdout/stderr are ordinary variables that programs may set ("The GNU C Library", 12.2).
    stdout = stderr;
}
