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
	case errors.Is(err, domain.ErrRetentionHold): // asked again every holdRecheck, not with backoff
		cond.Reason, cond.Message, retry = "RetentionHold", err.Error(), nil
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

// secrets reads the operator's Secrets from the API server itself, not from
// the cache: a decision to rotate must not rest on a copy older than the
// operator's own last write, and a write must carry the latest version.
type secrets struct {
	api  client.Reader // uncached
	kube client.Client
}

// read returns the Secret name, or a new one of that name when there is none.
func (s secrets) read(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var sec corev1.Secret
	err := s.api.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sec)
	if apierrors.IsNotFound(err) {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, nil
	}
	return &sec, err
}

// write makes sec, as read, hold data and annotations, owned by res (deleted
// with it) and labelled as the operator's. A Secret of that name that the
// operator did not write is left alone: AlreadyExists.
func (s secrets) write(ctx context.Context, res client.Object, sec *corev1.Secret, data map[string][]byte, annotations map[string]string) error {
	exists := sec.ResourceVersion != ""
	if exists && sec.Labels[managedByLabel] != managedBy {
		return fmt.Errorf("write Secret %s: %w", sec.Name, apierrors.NewAlreadyExists(corev1.Resource("secrets"), sec.Name))
	}
	metav1.SetMetaDataLabel(&sec.ObjectMeta, managedByLabel, managedBy)
	for k, v := range annotations {
		metav1.SetMetaDataAnnotation(&sec.ObjectMeta, k, v)
	}
	sec.Type, sec.Data = corev1.SecretTypeOpaque, data
	if err := controllerutil.SetControllerReference(res, sec, s.kube.Scheme()); err != nil {
		return fmt.Errorf("write Secret %s: %w", sec.Name, err)
	}
	var err error
	if exists {
		err = s.kube.Update(ctx, sec)
	} else {
		err = s.kube.Create(ctx, sec)
	}
	if err != nil {
		return fmt.Errorf("write Secret %s: %w", sec.Name, err)
	}
	return nil
}
