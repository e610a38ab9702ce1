package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// clientReconciler makes an OAuthClient resource a client of its Company's
// company, with its credentials in a Secret the resource owns.
type clientReconciler struct {
	kube     client.Client
	secrets  secrets
	tenants  ports.Tenants
	tokenURL string
}

func (r *clientReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var res OAuthClient
	if err := r.kube.Get(ctx, req.NamespacedName, &res); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !res.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.revoke(ctx, &res)
	}
	if err := addFinalizer(ctx, r.kube, &res); err != nil {
		return ctrl.Result{}, err
	}
	before := res.statusCopy()
	err := r.apply(ctx, &res)
	return ctrl.Result{}, reportStatus(ctx, r.kube, &res, before, err)
}

func (r *clientReconciler) apply(ctx context.Context, res *OAuthClient) error {
	var owner Company
	if err := r.kube.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Spec.CompanyRef.Name}, &owner); err != nil {
		return errors.Join(client.IgnoreNotFound(err), fmt.Errorf("Company %q: %w", res.Spec.CompanyRef.Name, errWaiting))
	}
	if owner.Status.CompanyID == "" || !owner.DeletionTimestamp.IsZero() {
		return fmt.Errorf("Company %q has no company yet: %w", owner.Name, errWaiting)
	}
	company, err := domain.ParseCompanyID(owner.Status.CompanyID)
	if err != nil {
		return err
	}
	in := ports.ClientInput{
		Company: company, Name: res.Spec.DisplayName, Scopes: strings.Join(res.Spec.Scopes, " "), ExternalRef: string(res.UID),
		KeySetURL: res.Spec.JWKSURL,
	}
	if res.Spec.JWKS != "" {
		in.KeySet = []byte(res.Spec.JWKS)
	}
	c, secret, err := r.tenants.EnsureClient(ctx, in)
	if err != nil {
		return err
	}
	res.Status.ClientID, res.Status.CompanyID = string(c.ID), company.String()
	switch {
	case c.CompanyDisabled:
		return fmt.Errorf("company %s: %w", company, domain.ErrCompanyDisabled)
	case !c.Active():
		return fmt.Errorf("client %s was revoked: %w", c.ID, domain.ErrInvalid)
	}
	stored, err := r.secrets.read(ctx, res.Namespace, res.Spec.SecretName)
	if err != nil {
		return err
	}
	if c.SignsAssertions() { // it signs in with its key: there is no secret to hand out
		if string(stored.Data["client_id"]) == string(c.ID) && len(stored.Data["client_secret"]) == 0 && string(stored.Data["token_url"]) == r.tokenURL {
			return nil
		}
		return r.secrets.write(ctx, res, stored, map[string][]byte{"client_id": []byte(c.ID), "token_url": []byte(r.tokenURL)}, nil)
	}
	if secret == "" { // not just created: rotate only a secret that was lost
		if string(stored.Data["client_id"]) == string(c.ID) && domain.Secret(stored.Data["client_secret"]).Matches(c.SecretHash) {
			return nil
		}
		// The old secret is lost: nothing to overlap with.
		if secret, err = r.tenants.RotateClientSecret(ctx, company, c, 0); err != nil {
			return err
		}
	}
	return r.secrets.write(ctx, res, stored, map[string][]byte{
		"client_id":     []byte(c.ID),
		"client_secret": []byte(secret),
		"token_url":     []byte(r.tokenURL),
	}, nil)
}

// revoke ends the client and its live tokens before the resource goes.
func (r *clientReconciler) revoke(ctx context.Context, res *OAuthClient) error {
	if !controllerutil.ContainsFinalizer(res, finalizer) {
		return nil
	}
	if res.Status.ClientID != "" {
		err := r.tenants.RevokeClient(ctx, domain.ClientID(res.Status.ClientID))
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
	}
	controllerutil.RemoveFinalizer(res, finalizer)
	return r.kube.Update(ctx, res)
}

// clientsOf maps a Company to the OAuthClients that refer to it, so that
// they are reconciled once it is ready.
func clientsOf(kube client.Client) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, owner client.Object) []reconcile.Request {
		var list OAuthClientList
		if err := kube.List(ctx, &list, client.InNamespace(owner.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, c := range list.Items {
			if c.Spec.CompanyRef.Name == owner.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
			}
		}
		return out
	}
}
