#!/usr/bin/env bash
# What `npm test` needs from the machine beyond node_modules: the real kubectl and Debian's
# python3-kubernetes (the simulator's fidelity is judged by them), Debian's Chromium (the explorer is tested in a real
# browser, driven by playwright-core) and PostgreSQL on 127.0.0.1:5432. Installs or starts
# what is missing, and fails loudly where it cannot: those tests are never skipped.
set -euo pipefail

# Install a Debian package when `check` fails (as root with apt-get), else fail with how to get it.
require() {
  local check="$1" package="$2" what="$3"
  if ! eval "$check" >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "test prerequisites: installing Debian's $package"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
    else
      echo "test prerequisites: $what; install it (Debian: apt-get install $package)" >&2
      exit 1
    fi
  fi
  eval "$check" >/dev/null 2>&1 || { echo "test prerequisites: $what, even after installing $package" >&2; exit 1; }
}

require "command -v kubectl" kubernetes-client "kubectl is not on PATH"
# The simulator's fidelity suite drives Debian's Python client too (test/sim/fidelity-*.test.ts).
require "/usr/bin/python3 -c 'import kubernetes'" python3-kubernetes "/usr/bin/python3 cannot import kubernetes"
require "[ -x /usr/bin/chromium ]" chromium "/usr/bin/chromium is missing"

if [ -z "${TEST_POSTGRES_URL:-}" ] && ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "test prerequisites: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  fi
  pg_isready -h 127.0.0.1 -p 5432 -t 10 -q || {
    echo "test prerequisites: PostgreSQL is not answering on 127.0.0.1:5432 (or set TEST_POSTGRES_URL)" >&2
    exit 1
  }
fi
