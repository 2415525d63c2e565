{{- define "ccm.name" -}}cloud-controller-manager{{- end -}}

{{- define "ccm.labels" -}}
app.kubernetes.io/name: {{ include "ccm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: ccmkit
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ccm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ccm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ccm.configSecret" -}}
{{- default (printf "%s-config" .Release.Name) .Values.config.existingSecret -}}
{{- end -}}

{{- define "ccm.configKey" -}}
{{- if .Values.config.key -}}{{ .Values.config.key }}
{{- else -}}{{ get (include "ccm.providers" . | fromYaml) (toString .Values.provider) }}
{{- end -}}
{{- end -}}

{{- define "ccm.leaderElect" -}}
{{- if and (eq .Values.kind "Deployment") (le (int .Values.replicaCount) 1) -}}false
{{- else -}}{{ .Values.leaderElection.enabled }}
{{- end -}}
{{- end -}}
