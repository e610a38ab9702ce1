// Package chart checks the Helm chart charts/praxis: helm lint, helm template
// with default, production-like and existing-secret values, the rendered
// manifests validated offline against the Kubernetes API schemas
// (kubectl-validate's built-in schemas), and the properties that matter
// asserted on the manifests. `make tools` installs helm and kubectl-validate
// from the Go module proxy into bin/tools; without them the tests skip
// loudly, except under CI=true, where they fail.
package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	chartDir    = "../../charts/praxis"
	kubeVersion = "1.30.0"
)

// tool finds a binary: $env, else bin/tools/name in the repository.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path, _ = filepath.Abs(filepath.Join("../../bin/tools", name))
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("%s not found at %s: run `make tools` (or set %s)", name, path, env)
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: %s", msg)
		}
		fmt.Fprintf(os.Stderr, "\n*** SKIPPING: %s ***\n\n", msg)
		t.Skip(msg)
	}
	return path
}

func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), err
}

// manifest is one rendered Kubernetes object.
type manifest map[string]any

func (m manifest) kind() string { s, _ := m["kind"].(string); return s }

// get walks a path of map keys and list indexes ("spec", "template", 0, …).
func (m manifest) get(path ...any) any {
	var cur any = map[string]any(m)
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := cur.(map[string]any)
			cur = mm[k]
		case int:
			l, _ := cur.([]any)
			if k >= len(l) {
				return nil
			}
			cur = l[k]
		}
	}
	return cur
}

func (m manifest) str(path ...any) string { s, _ := m.get(path...).(string); return s }

// render runs helm template and returns the objects by kind.
func render(t *testing.T, helm string, values ...string) map[string][]manifest {
	t.Helper()
	args := []string{"template", "praxis", chartDir, "--kube-version", kubeVersion, "--include-crds"}
	for _, v := range values {
		args = append(args, "-f", v)
	}
	out, err := run(t, helm, args...)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]manifest{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var m map[string]any // not manifest: yaml.v3 would give nested maps that type too
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		if m != nil {
			byKind[manifest(m).kind()] = append(byKind[manifest(m).kind()], m)
		}
	}
	return byKind
}

var valueSets = map[string][]string{
	"default":         nil,
	"production":      {chartDir + "/ci/production-values.yaml"},
	"existing-secret": {chartDir + "/ci/production-values.yaml", chartDir + "/ci/existing-secret-values.yaml"},
	"operator":        {chartDir + "/ci/production-values.yaml", chartDir + "/ci/operator-values.yaml"},
}

func TestLintAndValidate(t *testing.T) {
	helm := tool(t, "PRAXIS_HELM", "helm")
	validate := tool(t, "PRAXIS_KUBECTL_VALIDATE", "kubectl-validate")
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			args := []string{"lint", "--strict", chartDir, "--kube-version", kubeVersion}
			for _, v := range values {
				args = append(args, "-f", v)
			}
			if out, err := run(t, helm, args...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// Validate every object against the API schemas of kubeVersion,
			// offline. The ServiceMonitor and the PrometheusRule are CRDs the
			// built-in schemas lack; their fields are asserted in TestManifests
			// (and the rules' expressions in test/alerts_test.go) instead.
			dir := t.TempDir()
			n := 0
			for kind, objs := range render(t, helm, values...) {
				if kind == "ServiceMonitor" || kind == "PrometheusRule" {
					continue
				}
				for _, o := range objs {
					raw, _ := yaml.Marshal(map[string]any(o))
					n++
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.yaml", n, strings.ToLower(kind))), raw, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The example resources are checked against the chart's CRDs, rendered beside them.
			example, err := os.ReadFile(chartDir + "/examples/dr-huber.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "99-example.yaml"), example, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := run(t, validate, "--version", "1.30", "--local-crds", chartDir+"/crds", dir); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

func TestManifests(t *testing.T) {
	helm := tool(t, "PRAXIS_HELM", "helm")
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			objs := render(t, helm, values...)
			var deployments []manifest
			for _, d := range objs["Deployment"] {
				if d.str("metadata", "labels", "app.kubernetes.io/component") != "operator" {
					deployments = append(deployments, d)
				}
			}
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments of the server", len(deployments))
			}
			d := deployments[0]
			if crds := objs["CustomResourceDefinition"]; len(crds) != 2 {
				t.Errorf("%d CRDs, want Company and OAuthClient", len(crds))
			}
			checkOperator(t, objs, name == "operator")
			c := d.get("spec", "template", "spec", "containers", 0).(map[string]any)
			container := manifest(c)
			if container.str("livenessProbe", "httpGet", "path") != "/livez" || container.str("readinessProbe", "httpGet", "path") != "/readyz" ||
				container.str("startupProbe", "httpGet", "path") == "" {
				t.Errorf("probes: liveness %q, readiness %q, startup %q", container.str("livenessProbe", "httpGet", "path"),
					container.str("readinessProbe", "httpGet", "path"), container.str("startupProbe", "httpGet", "path"))
			}
			if container.get("args", 0) != "serve" {
				t.Errorf("the Deployment runs %v, want serve", container.get("args"))
			}

			// No container of any pod runs as root, or can write its root filesystem.
			var pods []manifest
			for _, kind := range []string{"Deployment", "Job"} {
				for _, o := range objs[kind] {
					pods = append(pods, manifest(o.get("spec", "template", "spec").(map[string]any)))
				}
			}
			for _, o := range objs["CronJob"] {
				pods = append(pods, manifest(o.get("spec", "jobTemplate", "spec", "template", "spec").(map[string]any)))
			}
			for _, pod := range pods {
				if pod.get("securityContext", "runAsNonRoot") != true || pod.get("securityContext", "runAsUser") == 0 {
					t.Errorf("pod security context %v lets a container run as root", pod.get("securityContext"))
				}
				for i := 0; pod.get("containers", i) != nil; i++ {
					sc := manifest(pod.get("containers", i).(map[string]any))
					if sc.get("securityContext", "readOnlyRootFilesystem") != true || sc.get("securityContext", "allowPrivilegeEscalation") != false ||
						sc.get("securityContext", "runAsNonRoot") != true || sc.get("securityContext", "capabilities", "drop", 0) != "ALL" {
						t.Errorf("container %s: security context %v", sc.str("name"), sc.get("securityContext"))
					}
					if sc.str("volumeMounts", 0, "mountPath") != "/tmp" {
						t.Errorf("container %s has no writable /tmp", sc.str("name"))
					}
				}
			}

			config := objs["ConfigMap"][0]
			existing := name == "existing-secret"
			switch name {
			case "default":
				// The embedded mode: one pod migrates itself, no Job, data on an emptyDir.
				if len(objs["Job"]) != 0 || config.str("data", "PRAXIS_AUTO_MIGRATE") != "true" {
					t.Errorf("default values: %d Jobs, PRAXIS_AUTO_MIGRATE %q", len(objs["Job"]), config.str("data", "PRAXIS_AUTO_MIGRATE"))
				}
				if len(objs["CronJob"]) != 0 {
					t.Error("the embedded mode sweeps in process, yet the chart renders a sweep CronJob")
				}
			default:
				jobs := objs["Job"]
				if len(jobs) != 1 {
					t.Fatalf("%d migration Jobs", len(jobs))
				}
				job := jobs[0]
				if job.str("metadata", "annotations", "helm.sh/hook") != "pre-install,pre-upgrade" ||
					!strings.Contains(job.str("metadata", "annotations", "helm.sh/hook-delete-policy"), "before-hook-creation") {
					t.Errorf("migration Job annotations %v", job.get("metadata", "annotations"))
				}
				if job.get("spec", "template", "spec", "containers", 0, "args", 0) != "migrate" {
					t.Errorf("the Job runs %v, want migrate", job.get("spec", "template", "spec", "containers", 0, "args"))
				}
				if config.str("data", "PRAXIS_AUTO_MIGRATE") != "false" {
					t.Errorf("serve migrates too: PRAXIS_AUTO_MIGRATE %q", config.str("data", "PRAXIS_AUTO_MIGRATE"))
				}
				if config.str("data", "PRAXIS_TRUSTED_PROXIES") != "10.0.0.0/8, fd00::/8" {
					t.Errorf("trusted proxies %q", config.str("data", "PRAXIS_TRUSTED_PROXIES"))
				}
				if config.str("data", "OTEL_EXPORTER_OTLP_ENDPOINT") != "http://otel-collector.observability:4318" {
					t.Errorf("OTLP endpoint %q", config.str("data", "OTEL_EXPORTER_OTLP_ENDPOINT"))
				}
				for _, kind := range []string{"HorizontalPodAutoscaler", "PodDisruptionBudget", "ServiceMonitor", "NetworkPolicy", "ServiceAccount", "Service"} {
					if kind == "HorizontalPodAutoscaler" && existing {
						continue // that value set turns autoscaling off
					}
					want := 1
					if kind == "ServiceAccount" && name == "operator" {
						want = 2 // the operator's own
					}
					if len(objs[kind]) != want {
						t.Errorf("%d %s objects, want %d", len(objs[kind]), kind, want)
					}
				}
				if sm := objs["ServiceMonitor"]; len(sm) == 1 && (sm[0].str("spec", "endpoints", 0, "path") != "/metrics" || sm[0].str("spec", "endpoints", 0, "port") != "http") {
					t.Errorf("ServiceMonitor endpoints %v", sm[0].get("spec", "endpoints"))
				}
				// The alerts, each with a severity and a runbook; the dashboard, JSON Grafana reads.
				if pr := objs["PrometheusRule"]; len(pr) != 1 || pr[0].str("metadata", "labels", "release") != "prometheus" {
					t.Errorf("%d PrometheusRules, want one labelled for the Prometheus Operator", len(pr))
				} else {
					rules, _ := pr[0].get("spec", "groups", 0, "rules").([]any)
					for i := range rules {
						if pr[0].str("spec", "groups", 0, "rules", i, "labels", "severity") == "" ||
							!strings.HasPrefix(pr[0].str("spec", "groups", 0, "rules", i, "annotations", "runbook_url"), "https://") {
							t.Errorf("alert %s has no severity or runbook", pr[0].str("spec", "groups", 0, "rules", i, "alert"))
						}
					}
					if len(rules) < 6 {
						t.Errorf("%d alerts", len(rules))
					}
				}
				var dashboards int
				for _, cm := range objs["ConfigMap"] {
					if cm.str("metadata", "labels", "grafana_dashboard") == "1" {
						dashboards++
						var d struct {
							UID    string `json:"uid"`
							Panels []any  `json:"panels"`
						}
						if err := json.Unmarshal([]byte(cm.str("data", "praxis.json")), &d); err != nil || d.UID == "" || len(d.Panels) < 8 {
							t.Errorf("dashboard: %v, uid %q, %d panels", err, d.UID, len(d.Panels))
						}
					}
				}
				if dashboards != 1 {
					t.Errorf("%d dashboards, want 1", dashboards)
				}
				secretRef := job.str("spec", "template", "spec", "containers", 0, "envFrom", 0, "secretRef", "name")
				if existing && secretRef != "praxis-connections" || !existing && secretRef != "praxis-migrate" {
					t.Errorf("the Job reads Secret %q", secretRef)
				}
				// Shared storage: crash leftovers are swept by a CronJob on the deployment's Secret.
				if len(objs["CronJob"]) != 1 {
					t.Fatalf("%d CronJobs, want the sweep", len(objs["CronJob"]))
				}
				sweep := objs["CronJob"][0]
				args := sweep.get("spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "args")
				if fmt.Sprint(args) != "[admin blobs sweep --older-than 1h --json]" || sweep.str("spec", "concurrencyPolicy") != "Forbid" {
					t.Errorf("the sweep runs %v (%s)", args, sweep.str("spec", "concurrencyPolicy"))
				}
				if ref := sweep.str("spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "envFrom", 0, "secretRef", "name"); existing && ref != "praxis-connections" || !existing && ref != "praxis" {
					t.Errorf("the sweep reads Secret %q", ref)
				}
			}

			secretRef := container.str("envFrom", 1, "secretRef", "name")
			annotations, _ := d.get("spec", "template", "metadata", "annotations").(map[string]any)
			if annotations["checksum/config"] == nil {
				t.Error("no checksum/config annotation: a changed setting would not roll the pods")
			}
			if existing {
				if n := len(objs["Secret"]); n != 0 {
					t.Errorf("%d Secrets rendered with existingSecret set", n)
				}
				if secretRef != "praxis-connections" || annotations["checksum/secret"] != nil {
					t.Errorf("Deployment reads Secret %q, checksum/secret %v", secretRef, annotations["checksum/secret"])
				}
			} else if secretRef != "praxis" || annotations["checksum/secret"] == nil || len(objs["Secret"]) == 0 {
				t.Errorf("Deployment reads Secret %q, checksum/secret %v, %d Secrets", secretRef, annotations["checksum/secret"], len(objs["Secret"]))
			}
		})
	}
}

// checkOperator: the operator's Deployment, ServiceAccount and RBAC exist
// exactly when enabled; it runs with leader election, and may do no more
// than its reconcilers need.
func checkOperator(t *testing.T, objs map[string][]manifest, enabled bool) {
	t.Helper()
	var op []manifest
	for _, d := range objs["Deployment"] {
		if d.str("metadata", "labels", "app.kubernetes.io/component") == "operator" {
			op = append(op, d)
		}
	}
	if !enabled {
		if len(op) != 0 || len(objs["ClusterRole"]) != 0 || len(objs["Role"]) != 0 {
			t.Errorf("operator disabled, yet %d Deployments, %d ClusterRoles, %d Roles", len(op), len(objs["ClusterRole"]), len(objs["Role"]))
		}
		return
	}
	if len(op) != 1 {
		t.Fatalf("%d operator Deployments", len(op))
	}
	pod := manifest(op[0].get("spec", "template", "spec").(map[string]any))
	args := fmt.Sprint(pod.get("containers", 0, "args"))
	if fmt.Sprint(pod.get("containers", 0, "command")) != "[/praxis-operator]" || !strings.HasPrefix(args, "[--leader-elect=true") || !strings.Contains(args, "--token-url=https://praxis.example.com/api/oauth/v2/token") {
		t.Errorf("operator args %s", args)
	}
	if pod.str("containers", 0, "livenessProbe", "httpGet", "path") != "/healthz" || pod.str("containers", 0, "readinessProbe", "httpGet", "path") != "/readyz" {
		t.Errorf("operator probes %v %v", pod.get("containers", 0, "livenessProbe"), pod.get("containers", 0, "readinessProbe"))
	}
	sa := pod.str("serviceAccountName")
	selector := op[0].get("spec", "selector", "matchLabels").(map[string]any)
	if selector["app.kubernetes.io/name"] != "praxis-operator" {
		t.Errorf("operator selector %v would take in the server's pods", selector)
	}
	var accounts []string
	for _, a := range objs["ServiceAccount"] {
		accounts = append(accounts, a.str("metadata", "name"))
	}
	if !slices.Contains(accounts, sa) {
		t.Errorf("operator runs as %q, not among the ServiceAccounts %v", sa, accounts)
	}
	// Least privilege: named resources and verbs, never a wildcard, never delete.
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, r := range objs[kind] {
			for i := 0; r.get("rules", i) != nil; i++ {
				rule := fmt.Sprint(r.get("rules", i))
				if strings.Contains(rule, "*") || strings.Contains(rule, "delete") {
					t.Errorf("%s %s rule %s", kind, r.str("metadata", "name"), rule)
				}
			}
		}
	}
	bound := map[string]string{}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, b := range objs[kind] {
			if b.str("subjects", 0, "name") != sa {
				t.Errorf("%s %s binds %q", kind, b.str("metadata", "name"), b.str("subjects", 0, "name"))
			}
			bound[b.str("roleRef", "kind")] = b.str("roleRef", "name")
		}
	}
	if bound["ClusterRole"] != "praxis-operator" || bound["Role"] != "praxis-operator-leader-election" {
		t.Errorf("bindings %v", bound)
	}
}

// TestWrongValuesFail: values.schema.json and the chart's own checks refuse
// values that cannot work, at install time.
func TestWrongValuesFail(t *testing.T) {
	helm := tool(t, "PRAXIS_HELM", "helm")
	prod := chartDir + "/ci/production-values.yaml"
	for name, args := range map[string][]string{
		"unknown key":                   {"--set", "replicas=3"},
		"no replicas":                   {"--set", "replicaCount=0"},
		"log level":                     {"--set", "config.logLevel=verbose"},
		"writable root filesystem":      {"--set", "securityContext.readOnlyRootFilesystem=false"},
		"root allowed":                  {"--set", "podSecurityContext.runAsNonRoot=false"},
		"shutdown grace in hours":       {"--set", "config.shutdownGrace=1h"},
		"database URL scheme":           {"-f", prod, "--set", "secrets.databaseURL=mysql://x"},
		"OTLP protocol":                 {"-f", prod, "--set", "otel.protocol=thrift"},
		"embedded mode, three replicas": {"--set", "replicaCount=3"},
		"replicas without Redis":        {"-f", prod, "--set", "secrets.redisURL="},
		"database without blob store":   {"--set", "secrets.databaseURL=postgres://db/praxis"},
		"operator in the embedded mode": {"--set", "operator.enabled=true"},
		"operator namespace":            {"-f", prod, "--set", "operator.enabled=true", "--set", "operator.watchNamespace=Not_A_Namespace"},
	} {
		if out, err := run(t, helm, append([]string{"template", "praxis", chartDir, "--kube-version", kubeVersion}, args...)...); err == nil {
			t.Errorf("%s: rendered anyway:\n%.300s", name, out)
		}
	}
}
