package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeepCopiesShareNothing: the hand-written deep copies (the informer
// cache hands out copies) copy every pointer, slice and map.
func TestDeepCopiesShareNothing(t *testing.T) {
	quota := resource.MustParse("10Gi")
	c := &Company{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{RotateUploadSecretAnnotation: "1"}},
		Spec:       CompanySpec{DisplayName: "A", StorageQuota: &quota},
		Status:     CompanyStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}},
	}
	list := (&CompanyList{Items: []Company{*c}}).DeepCopyObject().(*CompanyList)
	cp := c.DeepCopyObject().(*Company)
	cp.Annotations[RotateUploadSecretAnnotation] = "2"
	cp.Spec.StorageQuota.Add(resource.MustParse("1Gi"))
	cp.Status.Conditions[0].Status = metav1.ConditionFalse
	list.Items[0].Status.Conditions[0].Reason = "changed"
	if c.Annotations[RotateUploadSecretAnnotation] != "1" || c.Spec.StorageQuota.String() != "10Gi" ||
		c.Status.Conditions[0].Status != metav1.ConditionTrue || c.Status.Conditions[0].Reason != "" {
		t.Errorf("the original changed with its copies: %+v", c)
	}

	o := &OAuthClient{Spec: OAuthClientSpec{Scopes: []string{"company:read"}}, Status: OAuthClientStatus{Conditions: []metav1.Condition{{Type: "Ready"}}}}
	ocp := (&OAuthClientList{Items: []OAuthClient{*o}}).DeepCopyObject().(*OAuthClientList).Items[0]
	ocp.Spec.Scopes[0], ocp.Status.Conditions[0].Reason = "customers:read", "changed"
	if o.Spec.Scopes[0] != "company:read" || o.Status.Conditions[0].Reason != "" {
		t.Errorf("the original client changed with its copy: %+v", o)
	}
	if (*Company)(nil).DeepCopy() != nil || (*OAuthClient)(nil).DeepCopy() != nil {
		t.Error("a nil copies to non-nil")
	}
}
