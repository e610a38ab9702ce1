// Package operator is the Kubernetes operator of praxis (docs/contract.md §9): the
// Company and OAuthClient custom resources of praxis-health.io/v1alpha1,
// reconciled by controller-runtime into the database — through the same
// use case as the admin commands (the driving port ports.Tenants) — and into
// Kubernetes Secrets.
package operator

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"slices"
)

// GroupVersion is the API of the custom resources; their CRDs are in
// charts/praxis/crds/ and carry the validation that the API server enforces.
var GroupVersion = schema.GroupVersion{Group: "praxis-health.io", Version: "v1alpha1"}

// RotateUploadSecretAnnotation on a Company rotates its upload secret once
// per distinct value. It is the annotation's name; its value is no secret.
const RotateUploadSecretAnnotation = "praxis-health.io/rotate-upload-secret" //nolint:gosec // G101: a name, not a credential

// rotatedForAnnotation on the upload Secret is the value of
// RotateUploadSecretAnnotation its secret answers.
const rotatedForAnnotation = "praxis-health.io/rotated-for"

// DeletionPolicy says what deleting a Company does to the company: its
// clients are always revoked; its data stays, unless the policy is Erase.
type DeletionPolicy string

const (
	// Retain keeps the company working without its clients.
	Retain DeletionPolicy = "Retain"
	// Disable also refuses its uploads and tokens from then on.
	Disable DeletionPolicy = "Disable"
	// Erase deletes every row, stored file, token and session of the
	// company (praxis admin company erase); refused, and the resource kept,
	// while a retention hold is in force.
	Erase DeletionPolicy = "Erase"
)

// CompanySpec is a practice as a SaaS operator declares it.
type CompanySpec struct {
	DisplayName string `json:"displayName"`
	// TimeZone is an IANA zone; the API server defaults it to Europe/Vienna.
	TimeZone string `json:"timeZone,omitempty"`
	// Plan is basic, pro or enterprise; default basic.
	Plan string `json:"plan,omitempty"`
	// StorageQuota is a quantity of bytes; default 10Gi.
	StorageQuota   *resource.Quantity `json:"storageQuota,omitempty"`
	DeletionPolicy DeletionPolicy     `json:"deletionPolicy,omitempty"`
	// UploadSecretName is the Secret the upload secret is written to
	// (keys company_id, upload_secret); default <name>-upload.
	UploadSecretName string `json:"uploadSecretName,omitempty"`
	// Admins are the e-mail addresses of the practice's first admins: each
	// is invited once to the settings pages, its one-time link written to
	// the Secret <name>-admin-invites.
	Admins []string `json:"admins,omitempty"`
}

// CompanyStatus is what the operator made of the spec.
type CompanyStatus struct {
	CompanyID          string `json:"companyId,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	// UploadSecretRotation is the last value of the rotation annotation acted on.
	UploadSecretRotation string `json:"uploadSecretRotation,omitempty"`
	// InvitedAdmins are the addresses of spec.admins already invited.
	InvitedAdmins []string           `json:"invitedAdmins,omitempty"`
	Conditions    []metav1.Condition `json:"conditions,omitempty"`
}

// Company is a practice, a tenant of praxis.
type Company struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CompanySpec   `json:"spec,omitempty"`
	Status            CompanyStatus `json:"status,omitempty"`
}

// CompanyList is a list of Companies.
type CompanyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Company `json:"items"`
}

// LocalRef names an object of the same namespace.
type LocalRef struct {
	Name string `json:"name"`
}

// OAuthClientSpec is an integrator's client as a SaaS operator declares it.
type OAuthClientSpec struct {
	CompanyRef  LocalRef `json:"companyRef"`
	DisplayName string   `json:"displayName,omitempty"`
	// Scopes are from the scope catalogue; none means every scope.
	Scopes []string `json:"scopes,omitempty"`
	// SecretName is the Secret client_id, client_secret and token_url are written to.
	SecretName string `json:"secretName"`
	// JWKSURL or JWKS (a JWK Set as JSON) registers the client's public
	// keys: it signs in with signed assertions (SMART Backend Services),
	// has no secret, and its Secret holds client_id and token_url only.
	JWKSURL string `json:"jwksUrl,omitempty"`
	JWKS    string `json:"jwks,omitempty"`
}

// OAuthClientStatus is what the operator made of the spec.
type OAuthClientStatus struct {
	ClientID           string             `json:"clientId,omitempty"`
	CompanyID          string             `json:"companyId,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// OAuthClient is an integrator's OAuth client of one Company.
type OAuthClient struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              OAuthClientSpec   `json:"spec,omitempty"`
	Status            OAuthClientStatus `json:"status,omitempty"`
}

// OAuthClientList is a list of OAuthClients.
type OAuthClientList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OAuthClient `json:"items"`
}

// AddToScheme registers the resources with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Company{}, &CompanyList{}, &OAuthClient{}, &OAuthClientList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// The deep copies runtime.Object asks for, written out: four small types
// do not warrant a code generator in the build.

func (c *Company) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopy copies c and everything it points to.
func (c *Company) DeepCopy() *Company {
	if c == nil {
		return nil
	}
	out := new(Company)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out, sharing nothing.
func (c *Company) DeepCopyInto(out *Company) {
	*out = *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if c.Spec.StorageQuota != nil {
		q := c.Spec.StorageQuota.DeepCopy()
		out.Spec.StorageQuota = &q
	}
	out.Status.Conditions = copyConditions(c.Status.Conditions)
	out.Spec.Admins = slices.Clone(c.Spec.Admins)
	out.Status.InvitedAdmins = slices.Clone(c.Status.InvitedAdmins)
}

func (l *CompanyList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(CompanyList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies l into out, sharing nothing.
func (l *CompanyList) DeepCopyInto(out *CompanyList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Company, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
}

func (c *OAuthClient) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopy copies c and everything it points to.
func (c *OAuthClient) DeepCopy() *OAuthClient {
	if c == nil {
		return nil
	}
	out := new(OAuthClient)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out, sharing nothing.
func (c *OAuthClient) DeepCopyInto(out *OAuthClient) {
	*out = *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Scopes = append([]string(nil), c.Spec.Scopes...)
	out.Status.Conditions = copyConditions(c.Status.Conditions)
}

func (l *OAuthClientList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(OAuthClientList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies l into out, sharing nothing.
func (l *OAuthClientList) DeepCopyInto(out *OAuthClientList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]OAuthClient, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
}

func copyConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
