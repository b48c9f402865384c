#!/bin/sh
# Elfern Arena sample bot in POSIX shell over the stdio line protocol (docs/stdio.md): it plays the
# first of its legal cards. One JSON object per line arrives on stdin; each "turn_request" line is
# answered with {"card":"XX"} on stdout. Only sh and sed, no JSON tool.
while IFS= read -r line; do
  case "$line" in
    *'"type":"turn_request"'*)
      card=$(printf '%s\n' "$line" | sed -n 's/.*"legal_cards":\["\([^"]*\)".*/\1/p')
      printf '{"card":"%s"}\n' "$card"
      ;;
  esac
done
