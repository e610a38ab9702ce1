// Holds docs/contract.md §9 The operator.

package test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/praxis-health/praxis/adapters/memstore"
	"github.com/praxis-health/praxis/adapters/operator"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// cluster is the shared real kube-apiserver, with a client and a namespace of the test's own.
type cluster struct {
	*testenv.Kube
	kc client.Client
	ns string
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	k := testenv.KubeAPI(t, "../charts/praxis/crds")
	scheme, err := operator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := client.New(k.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t-" + hex.EncodeToString(b)}}
	if err := kc.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return cluster{Kube: k, kc: kc, ns: ns.Name}
}

// operatorProcess is one running praxis-operator.
type operatorProcess struct {
	cmd    *exec.Cmd
	log    *testenv.SyncBuffer
	exited chan error
}

// startOperator runs praxis-operator on s's database, watching only the
// test's namespace, and waits until it is ready.
func (c cluster) startOperator(t *testing.T, s *server, flags ...string) *operatorProcess {
	t.Helper()
	health := testenv.FreeAddr(t)
	args := append([]string{"--namespace", c.ns, "--health-addr", health, "--metrics-addr", "0", "--leader-elect=false"}, flags...)
	p := &operatorProcess{cmd: exec.Command(operatorBinary, args...), log: &testenv.SyncBuffer{}, exited: make(chan error, 1)}
	p.cmd.Env = append(slices.Clip(s.env), "KUBECONFIG="+c.KubeConfig, "PRAXIS_PUBLIC_URL="+s.url)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.stop()
		if t.Failed() {
			t.Logf("operator log:\n%s", p.log.String())
		}
	})
	eventually(t, 60*time.Second, "operator ready", func() bool {
		select {
		case err := <-p.exited:
			t.Fatalf("operator exited: %v\n%s", err, p.log.String())
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// stop sends SIGTERM and waits for the exit (a graceful shutdown); it
// returns how the process ended.
func (p *operatorProcess) stop() error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New("no exit within 30 s of SIGTERM")
	}
}

// ready waits until obj's Ready condition is True for its current generation.
func (c cluster) ready(t *testing.T, obj client.Object) {
	t.Helper()
	c.condition(t, obj, metav1.ConditionTrue, "Reconciled")
}

// condition waits until obj's Ready condition has status and reason for its current generation.
func (c cluster) condition(t *testing.T, obj client.Object, status metav1.ConditionStatus, reason string) {
	t.Helper()
	var last *metav1.Condition
	eventually(t, 60*time.Second, obj.GetName()+" Ready="+string(status)+" "+reason, func() bool {
		if err := c.kc.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		var conds []metav1.Condition
		var observed int64
		switch o := obj.(type) {
		case *operator.Company:
			conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
		case *operator.OAuthClient:
			conds, observed = o.Status.Conditions, o.Status.ObservedGeneration
		}
		last = meta.FindStatusCondition(conds, "Ready")
		return last != nil && last.Status == status && last.Reason == reason && observed == obj.GetGeneration()
	})
}

func (c cluster) secret(t *testing.T, name string) map[string][]byte {
	t.Helper()
	var s corev1.Secret
	if err := c.kc.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: name}, &s); err != nil {
		t.Fatalf("Secret %s: %v", name, err)
	}
	if s.Labels["app.kubernetes.io/managed-by"] != "praxis-operator" || !metav1.IsControlledBy(&s, &metav1.ObjectMeta{UID: s.OwnerReferences[0].UID}) {
		t.Errorf("Secret %s: labels %v, owners %v", name, s.Labels, s.OwnerReferences)
	}
	return s.Data
}

// gone waits until obj no longer exists (its finalizer has run).
func (c cluster) gone(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, 60*time.Second, obj.GetName()+" deleted", func() bool {
		return apierrors.IsNotFound(c.kc.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	})
}

// update applies change to the latest version of obj, again on a conflict
// with the operator's own writes.
func (c cluster) update(t *testing.T, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.kc.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.kc.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (c cluster) company(name string, spec operator.CompanySpec) *operator.Company {
	return &operator.Company{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name}, Spec: spec}
}

// countCompanies counts the database's companies declared by uid.
func countCompanies(t *testing.T, s *server, uid string) int64 {
	t.Helper()
	db := s.openDB(t)
	defer db.Close()
	n, err := db.NewSelect().Table("companies").Where("external_ref = ?", uid).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type companySettings struct {
	Name  string `bun:"name"`
	Plan  string `bun:"plan"`
	Quota int64  `bun:"storage_quota"`
}

func settingsOf(t *testing.T, s *server, companyID string) companySettings {
	t.Helper()
	db := s.openDB(t)
	defer db.Close()
	var got companySettings
	if err := db.NewSelect().Table("companies").Column("name", "plan", "storage_quota").Where("id = ?", companyID).Scan(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestOperator(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := newCluster(t)
		s := startServer(t, b)
		op := c.startOperator(t, s)

		// A Company becomes one company with a working upload secret.
		quota := kresource.MustParse("1Gi")
		huber := c.company("dr-huber", operator.CompanySpec{DisplayName: "Praxis Dr. Huber", Plan: "pro", StorageQuota: &quota, DeletionPolicy: operator.Disable,
			Admins: []string{"Anna@Praxis.example"}})
		if err := c.kc.Create(ctx, huber); err != nil {
			t.Fatal(err)
		}
		c.ready(t, huber)
		if huber.Spec.TimeZone != "Europe/Vienna" || huber.Status.ObservedGeneration != 1 {
			t.Errorf("defaults and status: %+v %+v", huber.Spec, huber.Status)
		}
		data := c.secret(t, "dr-huber-upload")
		practice := company{ID: string(data["company_id"]), Secret: string(data["upload_secret"])}
		if practice.ID != huber.Status.CompanyID || practice.Secret == "" {
			t.Fatalf("Secret %v, status %+v", data, huber.Status)
		}
		if n := countCompanies(t, s, string(huber.UID)); n != 1 {
			t.Fatalf("%d companies for one Company", n)
		}
		// The first admin is invited: a working one-time link in a Secret.
		if !slices.Equal(huber.Status.InvitedAdmins, []string{"anna@praxis.example"}) {
			t.Errorf("invited admins %v", huber.Status.InvitedAdmins)
		}
		link := string(c.secret(t, "dr-huber-admin-invites")["anna_at_praxis.example"])
		_, path, ok := strings.Cut(link, "/settings/join/"+practice.ID+"/")
		if !ok {
			t.Fatalf("invitation link %q", link)
		}
		join := &pageClient{t: t, site: s.url, cookies: map[string]string{}}
		join.do(http.MethodGet, "/settings/join/"+practice.ID+"/"+path, "", "")
		if code, _, body := join.do(http.MethodPost, "/settings/join/"+practice.ID+"/"+path+"/begin", "application/json", "{}"); code != http.StatusOK || !strings.Contains(body, "challenge") {
			t.Errorf("the operator's invitation: %d %s", code, body)
		}
		patient := s.newCustomer(t, practice)
		pdf := filePart("befund.pdf", pdfOfSize(10))
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(practice, patient), pdf); r.status != http.StatusOK {
			t.Fatalf("upload with the Secret's upload secret: %d %q", r.status, r.Message)
		}

		// A spec change applies.
		bigger := kresource.MustParse("2Gi")
		c.update(t, huber, func() {
			huber.Spec.DisplayName, huber.Spec.Plan, huber.Spec.StorageQuota = "Praxis Dr. Huber-Meier", "enterprise", &bigger
		})
		c.ready(t, huber)
		if got := settingsOf(t, s, practice.ID); got != (companySettings{"Praxis Dr. Huber-Meier", "enterprise", 2 << 30}) {
			t.Errorf("company after the spec change: %+v", got)
		}

		// The rotation annotation: the old secret is refused, the new one works.
		c.update(t, huber, func() { huber.Annotations = map[string]string{operator.RotateUploadSecretAnnotation: "2026-11-22"} })
		var rotated company
		eventually(t, 60*time.Second, "rotated upload secret", func() bool {
			data := c.secret(t, "dr-huber-upload")
			rotated = company{ID: string(data["company_id"]), Secret: string(data["upload_secret"])}
			return rotated.Secret != practice.Secret
		})
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(practice, patient), pdf); r.Message != "Secret not valid." {
			t.Errorf("old secret after rotation: %d %q", r.status, r.Message)
		}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(rotated, patient), pdf); r.status != http.StatusOK {
			t.Errorf("new secret: %d %q", r.status, r.Message)
		}

		// A restarted operator makes nothing new: one company, the same secret,
		// even when the last status write was lost (stopped right after the
		// Secret was written).
		if err := op.stop(); err != nil {
			t.Errorf("operator on SIGTERM: %v, want a clean exit", err)
		}
		if err := c.kc.Get(ctx, client.ObjectKeyFromObject(huber), huber); err != nil {
			t.Fatal(err)
		}
		huber.Status.UploadSecretRotation = "" // no operator runs: no conflict
		if err := c.kc.Status().Update(ctx, huber); err != nil {
			t.Fatal(err)
		}
		c.startOperator(t, s)
		c.update(t, huber, func() { huber.Spec.DisplayName = "Praxis Dr. Huber" })
		c.ready(t, huber)
		if n := countCompanies(t, s, string(huber.UID)); n != 1 {
			t.Errorf("%d companies after a restart", n)
		}
		if data := c.secret(t, "dr-huber-upload"); string(data["upload_secret"]) != rotated.Secret {
			t.Error("a restart rotated the upload secret")
		}

		// An OAuthClient: credentials with exactly its scopes; deleting it ends its token at once.
		lab := &operator.OAuthClient{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "lab-sync"}, Spec: operator.OAuthClientSpec{
			CompanyRef: operator.LocalRef{Name: "dr-huber"}, DisplayName: "Lab sync", Scopes: []string{"customers:read", "company:read"}, SecretName: "dr-huber-lab-sync",
		}}
		if err := c.kc.Create(ctx, lab); err != nil {
			t.Fatal(err)
		}
		c.ready(t, lab)
		creds := c.secret(t, "dr-huber-lab-sync")
		if string(creds["token_url"]) != s.url+"/api/oauth/v2/token" || string(creds["client_id"]) != lab.Status.ClientID {
			t.Errorf("client Secret: token_url %q, client_id %q (status %q)", creds["token_url"], creds["client_id"], lab.Status.ClientID)
		}
		cl := oauthClient{ID: string(creds["client_id"]), Secret: string(creds["client_secret"])}
		r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
		if r.status != http.StatusOK {
			t.Fatalf("token: %d %s", r.status, r.body)
		}
		granted := strings.Fields(r.decode(t)["scope"].(string))
		slices.Sort(granted)
		if !slices.Equal(granted, []string{"company:read", "customers:read"}) {
			t.Errorf("token scopes %v, want exactly company:read customers:read", granted)
		}
		token := r.decode(t)["access_token"].(string)
		if r := s.getCompany(t, token); r.status != http.StatusOK || r.decode(t)["name"] != "Praxis Dr. Huber" {
			t.Errorf("GET company with the token: %d %s", r.status, r.body)
		}
		other := s.request(t, http.MethodGet, "/api/oauth/v2/resource/services", "", "", "Authorization: Bearer "+token)
		if other.status != http.StatusForbidden {
			t.Errorf("a scope it was not given: %d", other.status)
		}
		// An OAuthClient with its JWK Set: no secret in its Secret, a signed
		// assertion gets a token; a key rotated in the resource takes over.
		oldKey, newKey := newECKey(t, "op-1"), newECKey(t, "op-2")
		signer := &operator.OAuthClient{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "fhir-sync"}, Spec: operator.OAuthClientSpec{
			CompanyRef: operator.LocalRef{Name: "dr-huber"}, Scopes: []string{"customers:read"}, SecretName: "dr-huber-fhir-sync",
			JWKS: string(keySet(t, oldKey)),
		}}
		if err := c.kc.Create(ctx, signer); err != nil {
			t.Fatal(err)
		}
		c.ready(t, signer)
		keyed := c.secret(t, "dr-huber-fhir-sync")
		if _, has := keyed["client_secret"]; has || string(keyed["client_id"]) != signer.Status.ClientID {
			t.Errorf("the keyed client's Secret: %v", slices.Collect(maps.Keys(keyed)))
		}
		aud := s.url + "/api/oauth/v2/token"
		if r := s.signIn(t, assertion(t, oldKey, signer.Status.ClientID, aud, nil)); r.status != http.StatusOK {
			t.Fatalf("the keyed client's assertion: %d %s", r.status, r.body)
		}
		c.update(t, signer, func() { signer.Spec.JWKS = string(keySet(t, newKey)) })
		eventually(t, 10*time.Second, "the rotated key signs in", func() bool {
			return s.signIn(t, assertion(t, newKey, signer.Status.ClientID, aud, nil)).status == http.StatusOK
		})

		if err := c.kc.Delete(ctx, lab); err != nil {
			t.Fatal(err)
		}
		c.gone(t, lab)
		if r := s.getCompany(t, token); r.status != http.StatusUnauthorized {
			t.Errorf("token of a deleted OAuthClient: %d, want 401", r.status)
		}

		// Deleting the Company (deletionPolicy Disable): uploads and tokens
		// refused, the data still there.
		second := &operator.OAuthClient{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "calendar"}, Spec: operator.OAuthClientSpec{
			CompanyRef: operator.LocalRef{Name: "dr-huber"}, SecretName: "dr-huber-calendar",
		}}
		if err := c.kc.Create(ctx, second); err != nil {
			t.Fatal(err)
		}
		c.ready(t, second)
		creds = c.secret(t, "dr-huber-calendar")
		cal := oauthClient{ID: string(creds["client_id"]), Secret: string(creds["client_secret"])}
		calToken := s.tokenFor(t, cal)
		if err := c.kc.Delete(ctx, huber); err != nil {
			t.Fatal(err)
		}
		c.gone(t, huber)
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(rotated, patient), pdf); r.Message != "UUID forbidden: ["+practice.ID+"]" {
			t.Errorf("upload to a disabled company: %d %q", r.status, r.Message)
		}
		if r := s.getCompany(t, calToken); r.status != http.StatusUnauthorized {
			t.Errorf("token of a disabled company: %d, want 401", r.status)
		}
		if r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cal)); r.status != http.StatusUnauthorized {
			t.Errorf("new token for a disabled company: %d %s", r.status, r.body)
		}
		if st := s.storageOf(t, practice.ID); st.files != 2 || st.objects != 2 || countCompanies(t, s, string(huber.UID)) != 1 {
			t.Errorf("the company's data after deletion: %+v", st)
		}
		// A Company with deletionPolicy Erase, deleted under a retention
		// hold: it stays, its Ready condition says why, and its data too;
		// the hold lifted (and the resource touched, so that it is asked at
		// once), every row and file of the company goes, and the resource.
		gruber := c.company("dr-gruber", operator.CompanySpec{DisplayName: "Praxis Dr. Gruber", DeletionPolicy: operator.Erase})
		if err := c.kc.Create(ctx, gruber); err != nil {
			t.Fatal(err)
		}
		c.ready(t, gruber)
		gdata := c.secret(t, "dr-gruber-upload")
		leaving := company{ID: string(gdata["company_id"]), Secret: string(gdata["upload_secret"])}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(leaving, s.newCustomer(t, leaving)), pdf); r.status != http.StatusOK {
			t.Fatalf("upload: %d %s", r.status, r.Message)
		}
		s.praxis(t, nil, "admin", "company", "hold", "--company", leaving.ID, "--until", time.Now().AddDate(0, 0, 1).Format(time.DateOnly), "--json")
		if err := c.kc.Delete(ctx, gruber); err != nil {
			t.Fatal(err)
		}
		c.condition(t, gruber, metav1.ConditionFalse, "RetentionHold")
		if st := s.storageOf(t, leaving.ID); st.files != 1 || st.objects != 1 {
			t.Errorf("a held company's data after its deletion was refused: %+v", st)
		}
		s.praxis(t, nil, "admin", "company", "hold", "--company", leaving.ID, "--clear", "--json")
		c.update(t, gruber, func() { gruber.Annotations = map[string]string{"example.org/hold-lifted": "yes"} })
		c.gone(t, gruber)
		db := s.openDB(t)
		defer db.Close()
		if left, _ := companyRows(t, db, leaving.ID); slices.ContainsFunc(slices.Collect(maps.Values(left)), func(n int64) bool { return n > 0 }) {
			t.Errorf("rows of the erased company: %v", left)
		}
		if n := s.storedObjects(leaving.ID); n > 0 {
			t.Errorf("stored objects of the erased company: %d", n)
		}
		for _, secret := range []string{rotated.Secret, cl.Secret, cal.Secret} {
			if strings.Contains(op.log.String(), secret) || strings.Contains(s.log.String(), secret) {
				t.Error("a secret reached a log")
			}
		}
	})
}

// TestOperatorResumesAfterCrash: an operator that died between writing the
// company and writing the status (and its Secret) left a company behind; the
// next one finds it by the resource's UID instead of making a second, and
// gives it a working upload secret.
func TestOperatorResumesAfterCrash(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := newCluster(t)
		s := startServer(t, b)
		huber := c.company("dr-huber", operator.CompanySpec{DisplayName: "Praxis Dr. Huber"})
		if err := c.kc.Create(ctx, huber); err != nil {
			t.Fatal(err)
		}
		// What the crashed operator did: the database write, through the same use case.
		db := s.openDB(t)
		defer db.Close()
		companies, customers, clients, tx := sqlstore.NewCompanyRepository(db), sqlstore.NewCustomerRepository(db), sqlstore.NewClientRepository(db), sqlstore.NewTransactor(db)
		admin := usecase.NewAdmin(companies, customers, clients, memstore.New(memstore.Limits{}), tx,
			usecase.NewAuditor(sqlstore.NewAuditLog(db), tx, companies, customers, clients, nil), sqlstore.NewErasures(db), sqlstore.NewCompanyLeases(db), nil)
		left, lost, err := admin.EnsureCompany(ctx, usecase.NewCompanyInput{Name: "Praxis Dr. Huber", ExternalRef: string(huber.UID)})
		if err != nil || lost == "" {
			t.Fatalf("seed: %v", err)
		}

		c.startOperator(t, s)
		c.ready(t, huber)
		if huber.Status.CompanyID != left.ID.String() || countCompanies(t, s, string(huber.UID)) != 1 {
			t.Fatalf("status %+v: want the company left behind (%s) and no second one", huber.Status, left.ID)
		}
		data := c.secret(t, "dr-huber-upload")
		practice := company{ID: string(data["company_id"]), Secret: string(data["upload_secret"])}
		if practice.Secret == string(lost) {
			t.Fatal("the lost secret cannot be known")
		}
		patient := s.newCustomer(t, practice)
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(practice, patient), filePart("a.pdf", pdfOfSize(10))); r.status != http.StatusOK {
			t.Errorf("upload with the Secret: %d %q", r.status, r.Message)
		}

		// A deleted Secret is written again, with a new secret.
		if err := c.kc.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "dr-huber-upload"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "Secret written again", func() bool {
			var sec corev1.Secret
			err := c.kc.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: "dr-huber-upload"}, &sec)
			return err == nil && string(sec.Data["upload_secret"]) != practice.Secret
		})

		// A spec the API server cannot judge (an unknown zone) is reported, not retried.
		mars := c.company("mars", operator.CompanySpec{DisplayName: "Praxis Mars", TimeZone: "Mars/Olympus_Mons"})
		if err := c.kc.Create(ctx, mars); err != nil {
			t.Fatal(err)
		}
		c.condition(t, mars, metav1.ConditionFalse, "InvalidSpec")
		if countCompanies(t, s, string(mars.UID)) != 0 || mars.Status.CompanyID != "" {
			t.Errorf("a company was made of an invalid spec: %+v", mars.Status)
		}

		// A Secret of that name that the operator did not write is left alone.
		theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "theirs"}, StringData: map[string]string{"password": "keep me"}}
		if err := c.kc.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		taken := c.company("taken", operator.CompanySpec{DisplayName: "Praxis Taken", UploadSecretName: "theirs"})
		if err := c.kc.Create(ctx, taken); err != nil {
			t.Fatal(err)
		}
		c.condition(t, taken, metav1.ConditionFalse, "SecretConflict")
		var after corev1.Secret
		if err := c.kc.Get(ctx, client.ObjectKeyFromObject(theirs), &after); err != nil {
			t.Fatal(err)
		}
		if string(after.Data["password"]) != "keep me" || len(after.Data) != 1 || len(after.OwnerReferences) != 0 {
			t.Errorf("someone else's Secret was changed: %v, owners %v", after.Data, after.OwnerReferences)
		}
	})
}

// TestOperatorInvalidSpecsRefusedByTheAPIServer: the CRDs' schemas, not the operator, refuse bad values.
func TestOperatorInvalidSpecsRefusedByTheAPIServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	minus, fraction := kresource.MustParse("-1Gi"), kresource.MustParse("1.5")
	for name, spec := range map[string]operator.CompanySpec{
		"no-name":         {},
		"blank-name":      {DisplayName: "   "},
		"plan":            {DisplayName: "A", Plan: "gold"},
		"zone":            {DisplayName: "A", TimeZone: "not a zone!"},
		"negative-quota":  {DisplayName: "A", StorageQuota: &minus},
		"fraction-quota":  {DisplayName: "A", StorageQuota: &fraction},
		"deletion-policy": {DisplayName: "A", DeletionPolicy: "Delete"},
		"secret-name":     {DisplayName: "A", UploadSecretName: "Not_A_Name"},
	} {
		if err := c.kc.Create(ctx, c.company(name, spec)); !apierrors.IsInvalid(err) {
			t.Errorf("Company %s %+v: %v, want refused as invalid", name, spec, err)
		}
	}
	for name, spec := range map[string]operator.OAuthClientSpec{
		"unknown-scope":  {CompanyRef: operator.LocalRef{Name: "a"}, SecretName: "s", Scopes: []string{"nope:read"}},
		"twice":          {CompanyRef: operator.LocalRef{Name: "a"}, SecretName: "s", Scopes: []string{"company:read", "company:read"}},
		"no-secret-name": {CompanyRef: operator.LocalRef{Name: "a"}},
		"no-company":     {SecretName: "s"},
		"keys-twice":     {CompanyRef: operator.LocalRef{Name: "a"}, SecretName: "s", JWKSURL: "https://keys.example/jwks.json", JWKS: `{"keys":[]}`},
		"keys-not-http":  {CompanyRef: operator.LocalRef{Name: "a"}, SecretName: "s", JWKSURL: "file:///etc/keys"},
	} {
		res := &operator.OAuthClient{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name}, Spec: spec}
		if err := c.kc.Create(ctx, res); !apierrors.IsInvalid(err) {
			t.Errorf("OAuthClient %s %+v: %v, want refused as invalid", name, spec, err)
		}
	}
	// The operator guide's example (charts/praxis/examples) is accepted as written.
	example, err := os.ReadFile("../charts/praxis/examples/dr-huber.yaml")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../docs/operators/kubernetes-operator.md")
	if err != nil || !strings.Contains(string(guide), string(example)) {
		t.Errorf("docs/operators/kubernetes-operator.md does not show charts/praxis/examples/dr-huber.yaml as it is (%v)", err)
	}
	dec := kyaml.NewYAMLOrJSONDecoder(bytes.NewReader(example), 4096)
	for n := 0; ; n++ {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			if n != 2 {
				t.Errorf("%d example resources, want a Company and an OAuthClient", n)
			}
			break
		} else if err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(c.ns)
		if err := c.kc.Create(ctx, &obj); err != nil {
			t.Errorf("example %s: %v", obj.GetKind(), err)
		}
	}

	ok := &operator.OAuthClient{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "ok"}, Spec: operator.OAuthClientSpec{
		CompanyRef: operator.LocalRef{Name: "a"}, SecretName: "s", Scopes: domainScopes(),
	}}
	if err := c.kc.Create(ctx, ok); err != nil {
		t.Fatalf("every scope of the catalogue: %v", err)
	}
	ok.Spec.CompanyRef.Name = "b"
	if err := c.kc.Update(ctx, ok); !apierrors.IsInvalid(err) {
		t.Errorf("changing companyRef: %v, want refused", err)
	}
}

func domainScopes() []string {
	var out []string
	for _, s := range domain.AllScopes() {
		out = append(out, string(s))
	}
	return out
}

// TestOperatorLeaderElection: of two replicas one leads; when it stops, the other takes over.
func TestOperatorLeaderElection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	s := startServer(t, backends[0])
	flags := []string{"--leader-elect=true", "--lease-namespace", c.ns}
	metrics := testenv.FreeAddr(t)
	replicas := []*operatorProcess{c.startOperator(t, s, append(flags, "--metrics-addr", metrics)...), c.startOperator(t, s, flags...)}
	leaders := func() (out []int) {
		for i, p := range replicas {
			if strings.Contains(p.log.String(), "Successfully acquired lease") {
				out = append(out, i)
			}
		}
		return out
	}
	eventually(t, 60*time.Second, "a leader", func() bool { return len(leaders()) > 0 })
	first := c.company("first", operator.CompanySpec{DisplayName: "Erste Praxis"})
	if err := c.kc.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	c.ready(t, first)
	if got := leaders(); len(got) != 1 {
		t.Fatalf("leaders %v, want exactly one", got)
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `controller_runtime_reconcile_total{controller="company"`) {
		t.Errorf("metrics lack the reconcile counter:\n%.500s", body)
	}
	leader := leaders()[0]
	if err := replicas[leader].stop(); err != nil {
		t.Errorf("leader on SIGTERM: %v, want a clean exit", err)
	}
	eventually(t, 60*time.Second, "the other replica leads", func() bool {
		return strings.Contains(replicas[1-leader].log.String(), "Successfully acquired lease")
	})
	second := c.company("second", operator.CompanySpec{DisplayName: "Zweite Praxis"})
	if err := c.kc.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	c.ready(t, second)
}
