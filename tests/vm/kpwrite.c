// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kpwrite - write argv[1] (or N bytes of 'x' with -n N) to /proc/krping_npu
 * in exactly one write(2) and print "ret=<bytes>" or "errno=<n>".  The VM
 * tests compare these against the expected errno.  SIGUSR1 interrupts the
 * write (no SA_RESTART), so a test can see the EINTR it causes.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	const char *path = getenv("KP_PROC") ? getenv("KP_PROC") : "/proc/krping_npu";
	char *buf;
	size_t len;
	ssize_t ret;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "-n")) {
		len = strtoul(argv[2], NULL, 0);
		buf = malloc(len + 1);
		if (!buf)
			return 2;
		memset(buf, 'x', len);
	} else if (argc == 2) {
		buf = argv[1];
		len = strlen(buf);
	} else {
		fprintf(stderr, "usage: kpwrite CMD | kpwrite -n BYTES\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);	/* sa_flags 0: no restart */
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		printf("errno=%d\n", errno);
		return 1;
	}
	ret = write(fd, buf, len);
	if (ret < 0) {
		printf("errno=%d\n", errno);
		return 1;
	}
	printf("ret=%zd\n", ret);
	return ret == (ssize_t)len ? 0 : 1;
}
