/*
 * cmd_baseline.c - `gpuscope baseline`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_baseline(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'baseline' is not available in this build yet");
	return EXIT_USAGE;
}
