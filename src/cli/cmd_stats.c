/*
 * cmd_stats.c - `gpuscope stats`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_stats(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'stats' is not available in this build yet");
	return EXIT_USAGE;
}
