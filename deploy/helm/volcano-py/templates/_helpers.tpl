{{/* Extra labels of every object (custom.common_labels), one per line at metadata.labels' indent. */}}
{{- define "volcano-py.commonLabels" -}}
{{- with .Values.custom.common_labels }}{{ toYaml . | nindent 4 }}{{ end }}
{{- end }}

{{/* registry/name:tag of one component's image; the argument is a dict with root and component. */}}
{{- define "volcano-py.image" -}}
{{- $basic := .root.Values.basic -}}
{{- $name := index $basic (printf "%s_image_name" .component) -}}
{{- $tag := index $basic (printf "%s_image_tag_version" .component) | default $basic.image_tag_version -}}
{{- if $basic.image_registry }}{{ $basic.image_registry }}/{{ end }}{{ $name }}:{{ $tag }}
{{- end }}

{{/* A log level volcano-py understands, or a failed render naming the value and the fix. */}}
{{- define "volcano-py.logLevel" -}}
{{- $level := toString (index .root.Values.custom (printf "%s_log_level" .component)) -}}
{{- if not (has $level (list "debug" "info" "warning" "error")) -}}
{{- fail (printf "custom.%s_log_level is %q: use debug, info, warning or error (Volcano's klog numbers do not apply)" .component $level) -}}
{{- end -}}
{{ $level }}
{{- end }}

{{/* nodeSelector, affinity and tolerations of one component: its own value, else the default_* one. */}}
{{- define "volcano-py.placement" -}}
{{- $custom := .root.Values.custom -}}
{{- with (index $custom (printf "%s_ns" .component)) | default $custom.default_ns }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (index $custom (printf "%s_affinity" .component)) | default $custom.default_affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (index $custom (printf "%s_tolerations" .component)) | default $custom.default_tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.basic.image_pull_secret }}
imagePullSecrets:
  - name: {{ . }}
{{- end }}
{{- end }}
