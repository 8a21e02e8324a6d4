#!/bin/sh
echo "# 0 passed, 0 failed"
exit 0
