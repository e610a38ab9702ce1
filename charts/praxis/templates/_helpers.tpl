{{- define "praxis.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "praxis.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "praxis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "praxis.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "praxis.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "praxis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "praxis.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "praxis.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "praxis.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{/* The Secret holding the connection URLs: the operator's, or the chart's. */}}
{{- define "praxis.secretName" -}}
{{- default (include "praxis.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/* "true" when neither a database URL nor an existing Secret is given: the embedded mode. */}}
{{- define "praxis.embedded" -}}
{{- if and (not .Values.existingSecret) (not .Values.secrets.databaseURL) -}}true{{- end -}}
{{- end -}}

{{/* Secret data rendered by the chart (also checksummed on the pods). */}}
{{- define "praxis.secretData" -}}
{{- if include "praxis.embedded" . -}}
PRAXIS_DATABASE_URL: {{ "sqlite:/var/lib/praxis/praxis.db" | b64enc | quote }}
PRAXIS_BLOB_URL: {{ "file:///var/lib/praxis/files" | b64enc | quote }}
{{- else -}}
PRAXIS_DATABASE_URL: {{ .Values.secrets.databaseURL | b64enc | quote }}
PRAXIS_BLOB_URL: {{ required "secrets.blobURL is required with secrets.databaseURL" .Values.secrets.blobURL | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.redisURL }}
PRAXIS_REDIS_URL: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.webhookKey }}
PRAXIS_WEBHOOK_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- range $k, $v := .Values.secrets.extraEnv }}
{{ $k }}: {{ $v | b64enc | quote }}
{{- end }}
{{- end -}}

{{/* Values that cannot work together fail the install. */}}
{{- define "praxis.validate" -}}
{{- if and (include "praxis.embedded" .) (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) -}}
{{- fail "the embedded mode (no secrets.databaseURL, no existingSecret) runs exactly one replica: set replicaCount 1 and autoscaling.enabled false, or give the database, Redis and blob URLs" -}}
{{- end -}}
{{- if and (not (include "praxis.embedded" .)) (not .Values.existingSecret) (not .Values.secrets.redisURL) (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) -}}
{{- fail "more than one replica needs secrets.redisURL: tokens and lockouts must be shared" -}}
{{- end -}}
{{- end -}}

{{/* Pod security and the read-only root's writable temp volume, shared by the Deployment and the Job. */}}
{{- define "praxis.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}
{{- define "praxis.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpVolume.sizeLimit }}
{{- end -}}

{{/* Whole seconds of a Go duration given in s or m ("5s", "1m"; the schema allows only these). */}}
{{- define "praxis.seconds" -}}
{{- if hasSuffix "m" . -}}{{ mul (trimSuffix "m" . | int) 60 }}{{- else -}}{{ trimSuffix "s" . | int }}{{- end -}}
{{- end -}}

{{/* The operator's pods: a name of their own, so that the server's selectors, Service and NetworkPolicy never take them in. */}}
{{- define "praxis.operatorSelectorLabels" -}}
app.kubernetes.io/name: {{ include "praxis.name" . }}-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "praxis.operatorLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "praxis.operatorSelectorLabels" . }}
app.kubernetes.io/component: operator
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
