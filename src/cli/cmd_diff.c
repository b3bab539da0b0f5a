/*
 * cmd_diff.c - `gpuscope diff`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'diff' is not available in this build yet");
	return EXIT_USAGE;
}
