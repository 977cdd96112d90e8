package validate

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// manifests are deploy/k8s built by Kustomize and decoded strictly into
// the Kubernetes API types: a field the API does not have fails the test,
// as the API server would refuse it.
type manifests struct {
	deployments map[string]*appsv1.Deployment
	services    []*corev1.Service
	hpas        []*autoscalingv2.HorizontalPodAutoscaler
	pdbs        []*policyv1.PodDisruptionBudget
	jobs        []*batchv1.Job
	configMaps  []*corev1.ConfigMap
}

func build(t *testing.T) manifests {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../k8s")
	require.NoError(t, err)
	m := manifests{deployments: map[string]*appsv1.Deployment{}}
	for _, r := range res.Resources() {
		y, err := r.AsYAML()
		require.NoError(t, err)
		var into any
		switch r.GetKind() {
		case "Namespace":
			into = &corev1.Namespace{}
		case "Deployment":
			d := &appsv1.Deployment{}
			m.deployments[r.GetName()], into = d, d
		case "Service":
			s := &corev1.Service{}
			m.services, into = append(m.services, s), s
		case "HorizontalPodAutoscaler":
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			m.hpas, into = append(m.hpas, h), h
		case "PodDisruptionBudget":
			p := &policyv1.PodDisruptionBudget{}
			m.pdbs, into = append(m.pdbs, p), p
		case "Job":
			j := &batchv1.Job{}
			m.jobs, into = append(m.jobs, j), j
		case "ConfigMap":
			c := &corev1.ConfigMap{}
			m.configMaps, into = append(m.configMaps, c), c
		default:
			t.Fatalf("unexpected kind %s (%s): add it to this test", r.GetKind(), r.GetName())
		}
		require.NoError(t, yaml.UnmarshalStrict(y, into), "%s %s", r.GetKind(), r.GetName())
	}
	return m
}

// TestKustomize checks the Kubernetes topology of docs/operations.md: one
// Deployment per role, each probed on the admin port, non-root and with
// resource requests; the API with a Service, an HPA and a disruption
// budget that select its pods; the migration as a Job.
func TestKustomize(t *testing.T) {
	m := build(t)
	known := knownVariables(t)
	roles := map[string]string{"seatghor-api": "api", "seatghor-workers": "workers", "seatghor-projectors": "projectors"}
	require.Len(t, m.deployments, len(roles))
	for name, role := range roles {
		d := m.deployments[name]
		require.NotNil(t, d, name)
		require.Equal(t, "seatghor", d.Namespace)
		sel, err := metav1LabelSelector(d)
		require.NoError(t, err)
		require.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "%s selects its own pods", name)
		pod := d.Spec.Template.Spec
		require.NotNil(t, pod.SecurityContext.RunAsNonRoot)
		require.True(t, *pod.SecurityContext.RunAsNonRoot, name)
		require.Len(t, pod.Containers, 1, name)
		c := pod.Containers[0]
		require.Equal(t, "registry.example.com/seatghor:latest", c.Image, "%s: the image is set in one place", name)
		require.Equal(t, []string{"serve"}, c.Args, name)
		require.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path, name)
		require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, name)
		require.Equal(t, "admin", c.LivenessProbe.HTTPGet.Port.StrVal, name)
		require.Equal(t, "admin", c.ReadinessProbe.HTTPGet.Port.StrVal, name)
		require.Contains(t, portNames(c), "admin", name)
		require.False(t, c.Resources.Requests.Cpu().IsZero(), "%s requests CPU", name)
		require.False(t, c.Resources.Requests.Memory().IsZero(), "%s requests memory", name)
		require.True(t, *c.SecurityContext.ReadOnlyRootFilesystem, name)
		require.False(t, *c.SecurityContext.AllowPrivilegeEscalation, name)
		env := map[string]string{}
		for _, e := range c.Env {
			requireKnown(t, known, name, e.Name)
			env[e.Name] = e.Value
		}
		require.Equal(t, role, env["SEATGHOR_ROLES"], name)
		require.Len(t, c.EnvFrom, 2, "%s reads the config map and the secret", name)
		require.NotNil(t, c.EnvFrom[1].SecretRef, name)
		require.Equal(t, "seatghor-secrets", c.EnvFrom[1].SecretRef.Name, name)
		require.NotNil(t, pdbFor(t, m, d), "%s has a disruption budget", name)
	}

	api := m.deployments["seatghor-api"]
	require.Len(t, m.hpas, 1)
	require.Equal(t, "Deployment", m.hpas[0].Spec.ScaleTargetRef.Kind)
	require.Equal(t, api.Name, m.hpas[0].Spec.ScaleTargetRef.Name)
	require.GreaterOrEqual(t, *m.hpas[0].Spec.MinReplicas, int32(2))
	require.Len(t, m.services, 1)
	svc := m.services[0]
	require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(api.Spec.Template.Labels)))
	require.Contains(t, portNames(api.Spec.Template.Spec.Containers[0]), svc.Spec.Ports[0].TargetPort.StrVal)

	require.Len(t, m.configMaps, 1)
	for k := range m.configMaps[0].Data {
		requireKnown(t, known, "the config map", k)
	}
	require.Len(t, m.jobs, 1)
	job := m.jobs[0].Spec.Template.Spec
	require.Equal(t, []string{"migrate"}, job.Containers[0].Args)
	require.Equal(t, "registry.example.com/seatghor:latest", job.Containers[0].Image)
	require.Equal(t, m.configMaps[0].Name, job.Containers[0].EnvFrom[0].ConfigMapRef.Name, "the Job reads the generated config map")
}

func metav1LabelSelector(d *appsv1.Deployment) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(d.Spec.Selector.MatchLabels)
}

func portNames(c corev1.Container) []string {
	var names []string
	for _, p := range c.Ports {
		names = append(names, p.Name)
	}
	return names
}

func pdbFor(t *testing.T, m manifests, d *appsv1.Deployment) *policyv1.PodDisruptionBudget {
	t.Helper()
	for _, p := range m.pdbs {
		require.Empty(t, p.Spec.Selector.MatchExpressions)
		if labels.SelectorFromSet(p.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
			return p
		}
	}
	return nil
}
