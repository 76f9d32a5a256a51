#!/usr/bin/env bash
# Session 37, run D (carry .whl): the main job on today's code, on a fresh kernel cache and
# again with the cache it filled, with the toolchain doctor and the intrinsic probes.
. tools/device-preamble.sh
. tools/main-job.sh
main_job
