#!/usr/bin/env bash
# What `npm test` needs from the machine beyond node_modules: the real kubectl (the
# simulator's fidelity is judged by it), Debian's Chromium (the explorer is tested in a real
# browser, driven by playwright-core) and PostgreSQL on 127.0.0.1:5432. Installs or starts
# what is missing, and fails loudly where it cannot: those tests are never skipped.
set -euo pipefail

if ! command -v kubectl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test prerequisites: installing Debian's kubernetes-client (kubectl)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
  else
    echo "test prerequisites: kubectl is not on PATH; install it (Debian: apt-get install kubernetes-client)" >&2
    exit 1
  fi
fi

if ! [ -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test prerequisites: installing Debian's chromium"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test prerequisites: /usr/bin/chromium is missing; install it (Debian: apt-get install chromium)" >&2
    exit 1
  fi
fi

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
