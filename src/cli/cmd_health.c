/*
 * cmd_health.c - `gpuscope health`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_health(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'health' is not available in this build yet");
	return EXIT_USAGE;
}
