/*
 * cmd_monitor.c - `gpuscope monitor`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_monitor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'monitor' is not available in this build yet");
	return EXIT_USAGE;
}
