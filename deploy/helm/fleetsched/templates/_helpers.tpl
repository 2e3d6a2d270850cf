{{/* Names, labels and the values both installation shapes derive from. */}}

{{- define "fleetsched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fleetsched.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fleetsched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fleetsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fleetsched.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "fleetsched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "fleetsched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fleetsched.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "fleetsched.sidecar" -}}
{{- if eq .Values.mode "sidecar" -}}true{{- end -}}
{{- end -}}

{{- define "fleetsched.plugin" -}}
{{- if eq .Values.mode "plugin" -}}true{{- end -}}
{{- end -}}

{{/* A kube-scheduler runs in this chart's pods (sidecar: stock, plugin: fleetsched-scheduler). */}}
{{- define "fleetsched.runsScheduler" -}}
{{- if or (include "fleetsched.sidecar" .) (include "fleetsched.plugin" .) -}}true{{- end -}}
{{- end -}}

{{- define "fleetsched.replicas" -}}
{{- if kindIs "invalid" .Values.replicaCount -}}2{{- else -}}{{- .Values.replicaCount -}}{{- end -}}
{{- end -}}

{{/* Standalone replicas that bind elect the one that binds and preempts (serve --leader-elect). */}}
{{- define "fleetsched.leaderElect" -}}
{{- if and (eq .Values.mode "standalone") .Values.extender.verbs.bind (gt (int (include "fleetsched.replicas" .)) 1) -}}true{{- end -}}
{{- end -}}

{{- define "fleetsched.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "fleetsched.pluginImage" -}}
{{- printf "%s:%s" .Values.plugin.image.repository (default .Chart.AppVersion .Values.plugin.image.tag) -}}
{{- end -}}

{{- define "fleetsched.leaseName" -}}
{{- default (include "fleetsched.fullname" .) .Values.kubeScheduler.leaderElection.resourceName -}}
{{- end -}}

{{/* Where kube-scheduler reaches fleetsched. */}}
{{- define "fleetsched.extenderURL" -}}
{{- if .Values.extender.urlPrefix -}}
{{- .Values.extender.urlPrefix -}}
{{- else if include "fleetsched.sidecar" . -}}
{{- printf "http://127.0.0.1:%v%s" .Values.server.port .Values.server.urlPrefix -}}
{{- else -}}
{{- printf "%s://%s.%s.svc:%v%s" (ternary "https" "http" (include "fleetsched.tls" . | eq "true")) (include "fleetsched.fullname" .) .Release.Namespace .Values.server.port .Values.server.urlPrefix -}}
{{- end -}}
{{- end -}}

{{/* server.tls is on (standalone only; checked here so every template agrees). */}}
{{- define "fleetsched.tls" -}}
{{- with .Values.server.tls -}}
{{- if .enabled -}}
{{- if ne $.Values.mode "standalone" -}}
{{- fail (printf "server.tls is for mode standalone (in %s mode kube-scheduler calls fleetsched on loopback or not at all)" $.Values.mode) -}}
{{- end -}}
{{- if not .secretName -}}
{{- fail "server.tls.enabled needs server.tls.secretName: a Secret with tls.crt, tls.key and ca.crt" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The KubeSchedulerConfiguration; the sidecar's kube-scheduler runs with it, standalone ships it. */}}
{{- define "fleetsched.schedulerConfig" -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
{{- if include "fleetsched.sidecar" . }}
leaderElection:
  leaderElect: {{ .Values.kubeScheduler.leaderElection.enabled }}
  resourceNamespace: {{ .Release.Namespace }}
  resourceName: {{ include "fleetsched.leaseName" . }}
{{- end }}
{{- if .Values.percentageOfNodesToScore }}
percentageOfNodesToScore: {{ .Values.percentageOfNodesToScore }}
{{- end }}
{{- if include "fleetsched.sidecar" . }}
profiles:
- schedulerName: {{ .Values.schedulerName }}
{{- end }}
extenders:
- urlPrefix: {{ include "fleetsched.extenderURL" . | quote }}
  {{- with .Values.extender.verbs }}
  {{- if .filter }}
  filterVerb: {{ .filter | quote }}
  {{- end }}
  {{- if .prioritize }}
  prioritizeVerb: {{ .prioritize | quote }}
  {{- end }}
  {{- if .preempt }}
  preemptVerb: {{ .preempt | quote }}
  {{- end }}
  {{- if .bind }}
  bindVerb: {{ .bind | quote }}
  {{- end }}
  {{- end }}
  weight: {{ .Values.extender.weight }}
  httpTimeout: {{ .Values.extender.httpTimeout | quote }}
  nodeCacheCapable: {{ .Values.extender.nodeCacheCapable }}
  {{- if include "fleetsched.tls" . }}
  enableHTTPS: true
  {{- with .Values.server.tls.scheduler }}
  tlsConfig:
    # kube-scheduler's client certificate and key (signed by the CA in the Secret's ca.crt), and
    # the CA that signed fleetsched's serving certificate.
    certFile: {{ .certFile | quote }}
    keyFile: {{ .keyFile | quote }}
    caFile: {{ .caFile | quote }}
    {{- with .serverName }}
    serverName: {{ . | quote }}
    {{- end }}
  {{- end }}
  {{- else }}
  enableHTTPS: false
  {{- end }}
  ignorable: {{ .Values.extender.ignorable }}
  {{- with .Values.extender.managedResources }}
  managedResources:
    {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Plugin mode: the KubeSchedulerConfiguration fleetsched-scheduler runs with. Fleetsched is
     enabled at every extension point it implements (multiPoint) and binds first (GPU pods, with
     their fleetsched.io/gpu-index; it skips every other pod for DefaultBinder). */}}
{{- define "fleetsched.pluginSchedulerConfig" -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: {{ .Values.kubeScheduler.leaderElection.enabled }}
  resourceNamespace: {{ .Release.Namespace }}
  resourceName: {{ include "fleetsched.leaseName" . }}
{{- if .Values.percentageOfNodesToScore }}
percentageOfNodesToScore: {{ .Values.percentageOfNodesToScore }}
{{- end }}
# No extenders here: kube-scheduler turns its signatures (opportunistic batching) off for every
# profile as soon as one extender is configured.
profiles:
- schedulerName: {{ .Values.schedulerName }}
  plugins:
    multiPoint:
      enabled:
      - name: Fleetsched
        weight: {{ .Values.plugin.weight }}
    # Fleetsched's Filter first: it only looks up the verdict its PreFilter reached for the node,
    # and kube-scheduler stops at a node's first failing filter, so the nodes it rejects (no GPU,
    # wrong model, GPUs full) skip the default filters.
    filter:
      enabled:
      - name: Fleetsched
    {{- with .Values.plugin.disabledScorePlugins }}
    # Default scores that work against Fleetsched's placement (chart value
    # plugin.disabledScorePlugins; their filters keep running):
    #   NodeResourcesFit (LeastAllocated) spreads pods over the emptiest nodes by CPU and memory,
    #   the opposite of GPU binpacking and of the fragmentation-aware policies;
    #   NodeResourcesBalancedAllocation pulls pods to whichever node evens out CPU and memory,
    #   blind to GPUs, and adds that noise to every GPU pod's ranking.
    # Every other default score stays on: taints, node and pod (anti-)affinity, topology spread,
    # image locality, DRA and volumes express what Fleetsched does not decide.
    {{- range $point := list "preScore" "score" }}
    {{ $point }}:
      disabled:
      {{- range $.Values.plugin.disabledScorePlugins }}
      - name: {{ . | quote }}
      {{- end }}
      {{- /* "*" also stops Fleetsched's multiPoint expansion at this point: enable it again. */}}
      {{- if has "*" $.Values.plugin.disabledScorePlugins }}
      enabled:
      - name: Fleetsched
        {{- if eq $point "score" }}
        weight: {{ $.Values.plugin.weight }}
        {{- end }}
      {{- end }}
    {{- end }}
    {{- end }}
    bind:
      disabled:
      - name: "*"
      enabled:
      - name: Fleetsched
      - name: DefaultBinder
  pluginConfig:
  - name: Fleetsched
    args:
      apiVersion: fleetsched.io/v1alpha1
      kind: FleetschedConfiguration
      {{- toYaml .Values.profile | nindent 6 }}
  {{- with .Values.plugin.pluginConfig }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The fleetsched container, the same in both extender shapes. */}}
{{- define "fleetsched.serverContainer" -}}
- name: fleetsched
  image: {{ include "fleetsched.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
  - serve
  {{- /* Sidecar: the verbs on loopback, kube-scheduler in the same pod is their one caller. */}}
  - --listen={{ if include "fleetsched.sidecar" . }}127.0.0.1{{ else }}0.0.0.0{{ end }}:{{ .Values.server.port }}
  {{- /* kubelet probes and Prometheus: a listener that serves /healthz, /readyz, /metrics only. */}}
  - --probe-listen=0.0.0.0:{{ .Values.server.probePort }}
  - --config=/etc/fleetsched/profile.yaml
  - --in-cluster
  {{- if .Values.server.urlPrefix }}
  - --url-prefix={{ .Values.server.urlPrefix }}
  {{- end }}
  {{- if .Values.extender.verbs.bind }}
  {{- /* Off loopback, a bind any caller can send makes fleetsched post Bindings with its own token. */}}
  {{- if and (not (include "fleetsched.sidecar" .)) (not (and (include "fleetsched.tls" .) .Values.server.tls.requireClientCert)) }}
  {{- fail "mode standalone binds pods for callers on the network: enable server.tls (with requireClientCert) so only kube-scheduler's client certificate is served, or set extender.verbs.bind=\"\" to let kube-scheduler bind" }}
  {{- end }}
  - --bind
  {{- end }}
  {{- if include "fleetsched.leaderElect" . }}
  {{- /* Only the Lease holder binds and preempts; the others serve filter and prioritize.
         kube-scheduler's defaults: lease 15s, renew deadline 10s, retry 2s. */}}
  - --leader-elect
  - --leader-elect-resource-namespace={{ .Release.Namespace }}
  - --leader-elect-resource-name={{ include "fleetsched.leaseName" . }}
  {{- end }}
  {{- with .Values.server.maxBodyBytes }}
  - --max-body-bytes={{ . | int64 }}
  {{- end }}
  {{- with .Values.server.maxBufferedBytes }}
  - --max-buffered-bytes={{ . | int64 }}
  {{- end }}
  {{- with .Values.server.maxConnections }}
  - --max-connections={{ . }}
  {{- end }}
  - --shutdown-grace={{ .Values.server.shutdownGraceSeconds }}
  {{- if include "fleetsched.tls" . }}
  - --tls-cert-file=/etc/fleetsched-tls/tls.crt
  - --tls-private-key-file=/etc/fleetsched-tls/tls.key
  {{- if .Values.server.tls.requireClientCert }}
  - --client-ca-file=/etc/fleetsched-tls/ca.crt
  {{- end }}
  {{- end }}
  {{- with .Values.server.extraArgs }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  ports:
  {{- if not (include "fleetsched.sidecar" .) }}
  - name: http
    containerPort: {{ .Values.server.port }}
  {{- end }}
  - name: metrics
    containerPort: {{ .Values.server.probePort }}
  # Liveness on /healthz only: /readyz stays false until the initial node and pod lists are cached.
  startupProbe:
    httpGet:
      path: /healthz
      port: metrics
    periodSeconds: 2
    failureThreshold: 30
  livenessProbe:
    httpGet:
      path: /healthz
      port: metrics
    periodSeconds: 10
  readinessProbe:
    httpGet:
      path: /readyz
      port: metrics
    periodSeconds: 5
  {{- with .Values.server.preStopSleepSeconds }}
  # Keep serving while the pod's stop reaches its callers, then SIGTERM drains (--shutdown-grace).
  lifecycle:
    preStop:
      sleep:
        seconds: {{ . }}
  {{- end }}
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
  - name: profile
    mountPath: /etc/fleetsched
    readOnly: true
  {{- if include "fleetsched.tls" . }}
  - name: tls
    mountPath: /etc/fleetsched-tls
    readOnly: true
  {{- end }}
{{- end -}}

{{/* kubelet's deadline: the preStop sleep, the drain, and 5 s to spare. */}}
{{- define "fleetsched.terminationGracePeriodSeconds" -}}
{{- $drain := add (int .Values.server.preStopSleepSeconds) (int .Values.server.shutdownGraceSeconds) -}}
{{- .Values.terminationGracePeriodSeconds | default (add $drain 5) -}}
{{- end -}}
