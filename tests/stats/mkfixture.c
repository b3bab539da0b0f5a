/*
 * mkfixture.c - write the stats test reports for the end-to-end tests:
 *   stats_mkfixture PATH [empty]
 */
#include "fixture.h"
#include "util/util.h"

#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: stats_mkfixture PATH [empty]\n");
		return 2;
	}
	if (argc == 3 && !strcmp(argv[2], "empty"))
		return fixture_write_empty(argv[1]) ? 1 : 0;
	return fixture_write(argv[1]) ? 1 : 0;
}
