package operator

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// companyReconciler makes a Company resource a company of the database, with
// its upload secret in a Secret the resource owns.
type companyReconciler struct {
	kube    client.Client
	secrets secrets
	tenants ports.Tenants
}

func (r *companyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var res Company
	if err := r.kube.Get(ctx, req.NamespacedName, &res); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !res.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.retire(ctx, &res)
	}
	if err := addFinalizer(ctx, r.kube, &res); err != nil {
		return ctrl.Result{}, err
	}
	before := res.statusCopy()
	err := r.apply(ctx, &res)
	return ctrl.Result{}, reportStatus(ctx, r.kube, &res, before, err)
}

// apply creates or updates the company and makes its Secret hold a working
// upload secret. Every step can be repeated: the company is found by the
// resource's UID, and a Secret is rewritten only when it does not verify.
func (r *companyReconciler) apply(ctx context.Context, res *Company) error {
	in := ports.CompanyInput{
		Name: res.Spec.DisplayName, TimeZone: res.Spec.TimeZone, Plan: res.Spec.Plan,
		StorageQuota: domain.DefaultStorageQuota, ExternalRef: string(res.UID),
	}
	if q := res.Spec.StorageQuota; q != nil {
		in.StorageQuota = q.Value()
	}
	company, secret, err := r.tenants.EnsureCompany(ctx, in)
	if err != nil {
		return err
	}
	res.Status.CompanyID = company.ID.String()
	if company.Disabled() {
		return fmt.Errorf("company %s was disabled: %w", company.ID, domain.ErrCompanyDisabled)
	}

	name := uploadSecretName(res)
	rotation := res.Annotations[RotateUploadSecretAnnotation]
	stored, err := r.secrets.read(ctx, res.Namespace, name)
	switch {
	case err != nil:
		return err
	case secret != "": // just created: the only moment the secret is known
	case rotation != stored.Annotations[rotatedForAnnotation],
		string(stored.Data["company_id"]) != company.ID.String(),
		!company.AcceptsUploadSecret(string(stored.Data["upload_secret"])): // asked for, or lost (a crash, a deleted Secret)
		if secret, err = r.tenants.RotateUploadSecret(ctx, company.ID); err != nil {
			return err
		}
	default:
		res.Status.UploadSecretRotation = rotation
		return nil
	}
	// The Secret itself records the rotation it answers, in the same write as
	// the secret: an operator stopped before its status write does not rotate twice.
	err = r.secrets.write(ctx, res, stored, map[string][]byte{
		"company_id":    []byte(company.ID.String()),
		"upload_secret": []byte(secret),
	}, map[string]string{rotatedForAnnotation: rotation})
	if err == nil {
		res.Status.UploadSecretRotation = rotation
	}
	return err
}

// retire revokes the company's clients (and with Disable disables it) before
// the resource goes; no data is deleted.
func (r *companyReconciler) retire(ctx context.Context, res *Company) error {
	if !controllerutil.ContainsFinalizer(res, finalizer) {
		return nil
	}
	if res.Status.CompanyID != "" {
		id, err := domain.ParseCompanyID(res.Status.CompanyID)
		if err != nil {
			return err
		}
		if err := r.tenants.RetireCompany(ctx, id, res.Spec.DeletionPolicy == Disable); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(res, finalizer)
	return r.kube.Update(ctx, res)
}

func uploadSecretName(res *Company) string {
	if res.Spec.UploadSecretName != "" {
		return res.Spec.UploadSecretName
	}
	return res.Name + "-upload"
}
