#!/usr/bin/env bash
# gpu_basic linked with the shared cudart: the same expectations.
PROG=gpu_basic_shared exec bash "$(dirname "$0")/t_basic.sh"
