package operator

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/praxis-health/praxis/domain"
)

// finalizer holds a resource back until its company or client is retired.
const finalizer = "praxis-health.io/finalizer"

// Secrets the operator writes carry these labels; its cache sees no others.
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "praxis-operator"
)

// errWaiting: the resource depends on another that is not ready yet; the
// watch on that one brings it back.
var errWaiting = errors.New("waiting")

// declared is a resource of ours: its status has conditions and the generation observed.
type declared interface {
	client.Object
	status() (conditions *[]metav1.Condition, observedGeneration *int64)
	// statusCopy is a deep copy of the status, to compare with later.
	statusCopy() any
}

func (c *Company) status() (*[]metav1.Condition, *int64) {
	return &c.Status.Conditions, &c.Status.ObservedGeneration
}

func (c *Company) statusCopy() any { return c.DeepCopy().Status }

func (c *OAuthClient) status() (*[]metav1.Condition, *int64) {
	return &c.Status.Conditions, &c.Status.ObservedGeneration
}

func (c *OAuthClient) statusCopy() any { return c.DeepCopy().Status }

// addFinalizer makes sure res is not deleted before it is retired.
func addFinalizer(ctx context.Context, kube client.Client, res client.Object) error {
	if !controllerutil.AddFinalizer(res, finalizer) {
		return nil
	}
	return kube.Update(ctx, res)
}

// reportStatus writes res's Ready condition for the outcome err and the
// generation it answers, when the status changed since before. It returns
// the error to retry with: none for a spec that must change first.
func reportStatus(ctx context.Context, kube client.Client, res declared, before any, err error) error {
	conditions, observed := res.status()
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: res.GetGeneration()}
	retry := err
	switch {
	case err == nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Reconciled", "in the database and its Secret"
	case errors.Is(err, domain.ErrInvalid):
		cond.Reason, cond.Message, retry = "InvalidSpec", err.Error(), nil
	case errors.Is(err, domain.ErrCompanyDisabled):
		cond.Reason, cond.Message, retry = "CompanyDisabled", err.Error(), nil
	case errors.Is(err, errWaiting):
		cond.Reason, cond.Message, retry = "CompanyNotReady", err.Error(), nil
	case apierrors.IsAlreadyExists(err), errors.As(err, new(*controllerutil.AlreadyOwnedError)):
		cond.Reason, cond.Message = "SecretConflict", "a Secret of that name exists and is not the operator's: "+err.Error()
	default:
		cond.Reason, cond.Message = "Error", err.Error()
	}
	meta.SetStatusCondition(conditions, cond)
	*observed = res.GetGeneration()
	if equality.Semantic.DeepEqual(before, res.statusCopy()) {
		return retry
	}
	if werr := kube.Status().Update(ctx, res); werr != nil {
		return errors.Join(retry, fmt.Errorf("write status: %w", werr))
	}
	return retry
}

// writeSecret creates or replaces the data of the Secret name, owned by res
// (deleted with it) and labelled as the operator's, with annotations set.
func writeSecret(ctx context.Context, kube client.Client, res client.Object, name string, data map[string][]byte, annotations map[string]string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: res.GetNamespace(), Name: name}}
	_, err := controllerutil.CreateOrUpdate(ctx, kube, s, func() error {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[managedByLabel] = managedBy
		for k, v := range annotations {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, k, v)
		}
		s.Type = corev1.SecretTypeOpaque
		s.Data = data
		return controllerutil.SetControllerReference(res, s, kube.Scheme())
	})
	if err != nil {
		return fmt.Errorf("write Secret %s: %w", name, err)
	}
	return nil
}
