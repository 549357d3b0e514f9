// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kpgrammar - print the control grammar's option table as Markdown, from
 * the one option table (proc/kp_opts.c), for docs/grammar.md and the
 * README (make docs; make test checks that both are current).
 */
#include <stdio.h>
#include <string.h>

#include "../proc/kp_opts.h"

/* A table cell: a '|' of the text is escaped, so as not to end the cell. */
static void cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s);
	}
}

int main(void)
{
	static char buf[32768];
	char *line, *save = NULL;
	int n = kp_opts_help(buf, sizeof(buf));

	if (n <= 0 || n >= (int)sizeof(buf)) {
		fprintf(stderr, "kpgrammar: option reference of %d bytes\n", n);
		return 1;
	}
	printf("| option | applies to | meaning |\n|---|---|---|\n");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *where = strchr(line, '\t');
		char *help = where ? strchr(where + 1, '\t') : NULL;

		if (!help) {
			fprintf(stderr, "kpgrammar: bad line '%s'\n", line);
			return 1;
		}
		*where++ = '\0';
		*help++ = '\0';
		printf("| `");
		cell(line);
		printf("` | ");
		cell(where);
		printf(" | ");
		cell(help);
		printf(" |\n");
	}
	return 0;
}
