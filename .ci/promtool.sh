# Sourced by .ci/run: makes Prometheus's promtool available to the tests as MCPD_TEST_PROMTOOL, so that
# deploy/prometheus/alerts.yaml is checked and its unit tests (alerts_test.yaml) run by the real tool, and Prometheus
# itself as MCPD_TEST_PROMETHEUS, the remote-write sender and receiver of PrometheusRemoteWriteIT. Debian's
# prometheus package carries both; it is unpacked into a cache, never installed (no service, no user).
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
  export MCPD_TEST_PROMTOOL="$(command -v promtool)"
  export MCPD_TEST_PROMETHEUS="$(command -v prometheus)"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpd-ci/prometheus"
  if [ ! -x "$cache/usr/bin/promtool" ]; then
    mkdir -p "$cache"
    ( cd "$cache" && { apt-get download prometheus >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get download prometheus >/dev/null; }; } \
      && dpkg -x prometheus_*.deb . && rm -f prometheus_*.deb ) \
      || { echo "promtool.sh: FAILED to fetch Debian's prometheus package" >&2; return 1; }
  fi
  export MCPD_TEST_PROMTOOL="$cache/usr/bin/promtool"
  export MCPD_TEST_PROMETHEUS="$cache/usr/bin/prometheus"
fi
echo "promtool.sh: $("$MCPD_TEST_PROMTOOL" --version 2>&1 | head -1)"
