#!/usr/bin/env bash
# Session 19, run D (device tool, carry .whl), in two calls on one warm machine: the whole
# sm90a GPU file on the session's final tree (its map cache's encoder touches every repeat
# call), as session 16's run D.
# Usage: bash tools/device_s19d.sh 1|2
exec bash tools/device_s15d.sh "$1" ,128x256x4k
