{{/*
Helpers of the mcpd chart. Every value is read by its full .Values path (no aliases), so that a test can check each
one against values.yaml.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "mcpd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The resources' name: fullnameOverride, else the release name (with "-mcpd" unless it contains the chart name). */}}
{{- define "mcpd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "mcpd.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select this release's pods; the component is the role. */}}
{{- define "mcpd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcpd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "mcpd.labels" -}}
helm.sh/chart: {{ include "mcpd.chart" . }}
{{ include "mcpd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mcpd
{{- end }}

{{/* The image reference; the tag defaults to the chart's appVersion. */}}
{{- define "mcpd.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The ServiceAccount the pods run as. */}}
{{- define "mcpd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcpd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Whether a collector keeps an embedded SQLite file (no PostgreSQL URL Secret): "true" or "". */}}
{{- define "mcpd.collectorOnSqlite" -}}
{{- if and (eq .Values.mode "collector") (not .Values.collector.data.secretName) }}true{{ end }}
{{- end }}

{{/*
Whether the probes run the image's health check instead of asking over HTTP(S): "true" under mutual TLS, where the
listener refuses a connection without a client certificate and the kubelet's HTTP probes present none; "" otherwise.
*/}}
{{- define "mcpd.probesRunTheHealthCheck" -}}
{{- if and .Values.tls.secretName .Values.tls.requireClientCertificates }}true{{ end }}
{{- end }}

{{/* Refuses values that would deploy something that cannot work, with a message saying what to set. */}}
{{- define "mcpd.validate" -}}
{{- if not (has .Values.mode (list "relay" "collector")) }}
{{- fail (printf "mode must be relay or collector, not %q" .Values.mode) }}
{{- end }}
{{- if and (eq .Values.mode "relay") (empty .Values.relay.upstreams) }}
{{- fail "mode relay needs relay.upstreams: the collectors to deliver to, the nearest first" }}
{{- end }}
{{- if and (include "mcpd.collectorOnSqlite" .) (gt (int .Values.collector.replicaCount) 1) }}
{{- fail "collector.replicaCount above 1 needs a shared PostgreSQL store (collector.data.secretName): an embedded SQLite file belongs to one pod" }}
{{- end }}
{{- if and .Values.tls.requireClientCertificates (not .Values.tls.secretName) }}
{{- fail "tls.requireClientCertificates needs tls.secretName: a kubernetes.io/tls Secret whose ca.crt signs the senders' certificates" }}
{{- end }}
{{- end }}

{{/* The variables a pod reads from Secrets: keys, and a collector's PostgreSQL URL (list items, not indented). */}}
{{- define "mcpd.secretEnv" -}}
{{- if and (eq .Values.mode "relay") .Values.relay.ingestKey.secretName }}
- name: MCPD_INGEST_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.relay.ingestKey.secretName | quote }}
      key: {{ .Values.relay.ingestKey.secretKey | quote }}
{{- end }}
{{- if and (eq .Values.mode "relay") .Values.relay.upstreamKey.secretName }}
- name: MCPD_UPSTREAM_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.relay.upstreamKey.secretName | quote }}
      key: {{ .Values.relay.upstreamKey.secretKey | quote }}
{{- end }}
{{- if and (eq .Values.mode "collector") .Values.collector.ingestKey.secretName }}
- name: MCPD_INGEST_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.collector.ingestKey.secretName | quote }}
      key: {{ .Values.collector.ingestKey.secretKey | quote }}
{{- end }}
{{- if and (eq .Values.mode "collector") .Values.collector.data.secretName }}
- name: MCPD_DATA
  valueFrom:
    secretKeyRef:
      name: {{ .Values.collector.data.secretName | quote }}
      key: {{ .Values.collector.data.secretKey | quote }}
{{- end }}
{{- end }}

{{/*
The pod template of both roles: the StatefulSet (relay) and the Deployment (collector) include it.
*/}}
{{- define "mcpd.podTemplate" -}}
metadata:
  labels:
    {{- include "mcpd.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # mcpd reads its MCPD_* settings at start only: a changed ConfigMap must roll the pods.
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  serviceAccountName: {{ include "mcpd.serviceAccountName" . }}
  automountServiceAccountToken: false
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  containers:
    - name: mcpd
      image: {{ include "mcpd.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      # The image's entrypoint is the launcher; the argument is the role.
      args:
        - {{ if eq .Values.mode "relay" }}relay{{ else }}serve{{ end }}
      ports:
        - name: http
          containerPort: {{ .Values.port }}
          protocol: TCP
      # Plain settings from the release's ConfigMap.
      envFrom:
        - configMapRef:
            name: {{ include "mcpd.fullname" . }}
      {{- $secretEnv := include "mcpd.secretEnv" . | trim }}
      {{- if or $secretEnv .Values.extraEnv }}
      # Secrets, each from a Secret the operator created (never in the ConfigMap), then extraEnv.
      env:
        {{- with $secretEnv }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      {{- if include "mcpd.probesRunTheHealthCheck" . }}
      # Mutual TLS (tls.requireClientCertificates): the listener refuses a connection without a client certificate,
      # and the kubelet's HTTP probes present none. The image's health check asks the same paths over HTTPS and
      # presents the pod's own certificate (MCPD_TLS_CERT, MCPD_TLS_KEY), which ca.crt signed.
      startupProbe:
        exec:
          command: ["/opt/mcpd/bin/healthcheck", "/healthz"]
        {{- toYaml .Values.probes.startup | nindent 8 }}
      livenessProbe:
        exec:
          command: ["/opt/mcpd/bin/healthcheck", "/healthz"]
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      readinessProbe:
        exec:
          command: ["/opt/mcpd/bin/healthcheck", "/readyz"]
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      {{- else }}
      # Until the JVM and Camel serve, the other probes wait.
      startupProbe:
        httpGet:
          path: /healthz
          port: http
          {{- if .Values.tls.secretName }}
          scheme: HTTPS
          {{- end }}
        {{- toYaml .Values.probes.startup | nindent 8 }}
      # /healthz answers 200 while the process serves: a failure means a hung process, restart it.
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
          {{- if .Values.tls.secretName }}
          scheme: HTTPS
          {{- end }}
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      # /readyz: a full relay (or a collector without its store) leaves the Service until it can take requests.
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
          {{- if .Values.tls.secretName }}
          scheme: HTTPS
          {{- end }}
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      {{- end }}
      resources:
        {{- if eq .Values.mode "relay" }}
        {{- toYaml .Values.relay.resources | nindent 8 }}
        {{- else }}
        {{- toYaml .Values.collector.resources | nindent 8 }}
        {{- end }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        # The relay's spool (/data/mcpd.spool/relay) or the collector's SQLite file (/data/mcpd.db).
        - name: {{ if eq .Values.mode "relay" }}spool{{ else }}data{{ end }}
          mountPath: /data
        # The JVM, Vert.x and the SQLite driver write temporary files; the root filesystem is read-only.
        - name: tmp
          mountPath: /tmp
        {{- if .Values.tls.secretName }}
        # TLS files: each Secret a whole read-only volume (never a subPath, which the kubelet does not update), so a
        # renewal replaces the files in place, and mcpd takes them within 10 s, without a restart.
        - name: tls-listener
          mountPath: /etc/mcpd/tls/listener
          readOnly: true
        {{- end }}
        {{- if and (eq .Values.mode "relay") .Values.relay.upstreamTls.caSecretName }}
        # Upstreams' authorities, and below the relay's client certificate: whole Secret volumes too.
        - name: tls-upstream-ca
          mountPath: /etc/mcpd/tls/upstream-ca
          readOnly: true
        {{- end }}
        {{- if and (eq .Values.mode "relay") .Values.relay.upstreamTls.clientSecretName }}
        - name: tls-upstream-client
          mountPath: /etc/mcpd/tls/upstream-client
          readOnly: true
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- if .Values.tls.secretName }}
    # The listener's tls.crt, tls.key (and ca.crt): MCPD_TLS_CERT, MCPD_TLS_KEY (and MCPD_TLS_CLIENT_CA) name them.
    - name: tls-listener
      secret:
        secretName: {{ .Values.tls.secretName | quote }}
    {{- end }}
    {{- if and (eq .Values.mode "relay") .Values.relay.upstreamTls.caSecretName }}
    # The authorities trusted for upstreams, as ca.crt whatever their key in the Secret: MCPD_UPSTREAM_CA names it.
    - name: tls-upstream-ca
      secret:
        secretName: {{ .Values.relay.upstreamTls.caSecretName | quote }}
        items:
          - key: {{ .Values.relay.upstreamTls.caKey | quote }}
            path: ca.crt
    {{- end }}
    {{- if and (eq .Values.mode "relay") .Values.relay.upstreamTls.clientSecretName }}
    # The client certificate for upstreams: MCPD_UPSTREAM_CLIENT_CERT and MCPD_UPSTREAM_CLIENT_KEY name its files.
    - name: tls-upstream-client
      secret:
        secretName: {{ .Values.relay.upstreamTls.clientSecretName | quote }}
    {{- end }}
    {{- if eq .Values.mode "collector" }}
    - name: data
      {{- if and (include "mcpd.collectorOnSqlite" .) .Values.collector.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ include "mcpd.fullname" . }}-data
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
