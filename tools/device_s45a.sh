#!/usr/bin/env bash
# Session 45, run A (device tool, carry .whl; measurement only, perf-notes h8): what a launch's
# parameter count costs the host (kernelParams against one packed buffer through `extra`, 1 to
# 64 parameters, and the rms_norm replay's own bound launch), then every piece of a small
# call's host path (tools/host_parts.py) on the same host.
. tools/device-preamble.sh
timeout 200 python3 tools/launch_params.py 2>&1 | tail -25
timeout 200 python3 tools/host_parts.py 2>&1 | grep -v "^ " | head -60
echo "done at ${SECONDS}s"
