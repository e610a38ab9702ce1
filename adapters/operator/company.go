package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	invite  func(ctx context.Context, company domain.CompanyID, email string) (string, error)
}

func (r *companyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var res Company
	if err := r.kube.Get(ctx, req.NamespacedName, &res); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !res.DeletionTimestamp.IsZero() {
		return r.retire(ctx, &res)
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
		return r.inviteAdmins(ctx, res, company.ID)
	}
	// The Secret itself records the rotation it answers, in the same write as
	// the secret: an operator stopped before its status write does not rotate twice.
	err = r.secrets.write(ctx, res, stored, map[string][]byte{
		"company_id":    []byte(company.ID.String()),
		"upload_secret": []byte(secret),
	}, map[string]string{rotatedForAnnotation: rotation})
	if err != nil {
		return err
	}
	res.Status.UploadSecretRotation = rotation
	return r.inviteAdmins(ctx, res, company.ID)
}

// inviteAdmins invites each address of spec.admins once and keeps its
// link in the Secret <name>-admin-invites (key: the address with @ as
// _at_, see secretKey), beside the links made before. An address removed from the spec
// keeps its account: people are removed in the settings pages.
func (r *companyReconciler) inviteAdmins(ctx context.Context, res *Company, company domain.CompanyID) error {
	if r.invite == nil {
		return nil
	}
	var todo []string
	for _, email := range res.Spec.Admins {
		email = strings.ToLower(strings.TrimSpace(email))
		if !slices.Contains(res.Status.InvitedAdmins, email) && !slices.Contains(todo, email) {
			todo = append(todo, email)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	name := res.Name + "-admin-invites"
	stored, err := r.secrets.read(ctx, res.Namespace, name)
	if err != nil {
		return err
	}
	data := map[string][]byte{}
	for k, v := range stored.Data {
		data[k] = v
	}
	// The Secret, read from the API server itself, decides: an address
	// whose link it holds was invited, though the status may not say so
	// yet (a reconcile on a cached copy older than the last status write,
	// or a crash between the Secret and the status). Inviting it again
	// would replace the link the admin may already hold: the older stops
	// working.
	invited := false
	for _, email := range todo {
		if _, ok := data[secretKey(email)]; ok {
			continue
		}
		link, err := r.invite(ctx, company, email)
		if err != nil {
			return fmt.Errorf("invite %s: %w", email, err)
		}
		data[secretKey(email)] = []byte(link)
		invited = true
	}
	if invited {
		if err := r.secrets.write(ctx, res, stored, data, nil); err != nil {
			return err
		}
	}
	res.Status.InvitedAdmins = append(res.Status.InvitedAdmins, todo...)
	return nil
}

// holdRecheck is how often a Company deleted under a retention hold asks
// again whether the hold has ended (a change of the resource asks at once).
const holdRecheck = 10 * time.Minute

// retire revokes the company's clients (and with Disable disables it) before
// the resource goes; no data is deleted, except with Erase: then every row,
// object and token of the company goes, and the resource waits while a
// retention hold is in force (its Ready condition says until when).
func (r *companyReconciler) retire(ctx context.Context, res *Company) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(res, finalizer) {
		return ctrl.Result{}, nil
	}
	if res.Status.CompanyID != "" {
		id, err := domain.ParseCompanyID(res.Status.CompanyID)
		if err != nil {
			return ctrl.Result{}, err
		}
		if res.Spec.DeletionPolicy == Erase {
			before := res.statusCopy()
			_, err := r.tenants.EraseCompany(ctx, id, ports.EraseInput{By: "operator: Company " + res.Namespace + "/" + res.Name})
			if errors.Is(err, domain.ErrRetentionHold) {
				return ctrl.Result{RequeueAfter: holdRecheck}, reportStatus(ctx, r.kube, res, before, err)
			}
			if err != nil {
				return ctrl.Result{}, reportStatus(ctx, r.kube, res, before, err)
			}
		} else if err := r.tenants.RetireCompany(ctx, id, res.Spec.DeletionPolicy == Disable); err != nil {
			return ctrl.Result{}, err
		}
	}
	controllerutil.RemoveFinalizer(res, finalizer)
	return ctrl.Result{}, r.kube.Update(ctx, res)
}

func uploadSecretName(res *Company) string {
	if res.Spec.UploadSecretName != "" {
		return res.Spec.UploadSecretName
	}
	return res.Name + "-upload"
}

// secretKey spells an address as a Secret's key may be: @ as _at_, any
// other character a key cannot hold as _.
func secretKey(email string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ReplaceAll(email, "@", "_at_"))
}
