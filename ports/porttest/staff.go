package porttest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

// StaffRepositories is what the staff suite needs of an adapter.
type StaffRepositories struct {
	Repositories
	Staff ports.Staff
}

// RunStaffSuite checks the staff store against the ports' contract
// (docs/contract.md §13).
func RunStaffSuite(t *testing.T, newRepos func(t *testing.T) StaffRepositories) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, r StaffRepositories)
	}{
		{"an invite is claimed once, by its company, before it expires", staffInvites},
		{"members, roles and passkeys are their company's alone; the last admin stays", staffMembers},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newRepos(t))
		})
	}
}

func invite(t *testing.T, r StaffRepositories, company domain.CompanyID, email string, role staff.Role, now time.Time) domain.Secret {
	t.Helper()
	in, token, err := staff.NewInvite(company, email, role, "operator", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Staff.SaveInvite(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return token
}

func staffInvites(t *testing.T, r StaffRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	now := time.Now().UTC().Truncate(time.Second)

	token := invite(t, r, a.ID, "Anna@Praxis.example", staff.RoleAdmin, now)
	if _, err := r.Staff.ClaimInvite(ctx, b.ID, token.Hash(), now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("claimed by another company: %v", err)
	}
	if open, _ := r.Staff.Invites(ctx, a.ID, now); len(open) != 1 || open[0].Email != "anna@praxis.example" {
		t.Errorf("open invites: %+v", open)
	}
	// Two claims of one link at once: one wins.
	var wg sync.WaitGroup
	results := make([]error, 2)
	members := make([]staff.Member, 2)
	for i := range results {
		wg.Go(func() { members[i], results[i] = r.Staff.ClaimInvite(ctx, a.ID, token.Hash(), now) })
	}
	wg.Wait()
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
			if m := members[i]; m.Email != "anna@praxis.example" || m.Role != staff.RoleAdmin || m.Company != a.ID {
				t.Errorf("member: %+v", m)
			}
		case !errors.Is(err, domain.ErrNotFound) && !errors.Is(err, domain.ErrConflict):
			t.Errorf("the losing claim: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims of one link succeeded, want 1", won)
	}

	// A second invite of the same address finds the same member (a lost
	// passkey's recovery); it replaces an older open one.
	invite(t, r, a.ID, "anna@praxis.example", staff.RoleViewer, now)
	again := invite(t, r, a.ID, "anna@praxis.example", staff.RoleViewer, now)
	if open, _ := r.Staff.Invites(ctx, a.ID, now); len(open) != 1 {
		t.Errorf("open invites after a second: %d, want 1", len(open))
	}
	m, err := r.Staff.ClaimInvite(ctx, a.ID, again.Hash(), now)
	if err != nil || m.ID != members[0].ID && m.ID != members[1].ID || m.Role != staff.RoleAdmin {
		t.Errorf("recovery: %+v %v, want the same admin", m, err)
	}

	expired := invite(t, r, a.ID, "old@praxis.example", staff.RoleViewer, now.Add(-staff.InviteTTL-time.Second))
	if _, err := r.Staff.ClaimInvite(ctx, a.ID, expired.Hash(), now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("expired invite: %v", err)
	}
	if open, _ := r.Staff.Invites(ctx, a.ID, now); len(open) != 0 {
		t.Errorf("open invites: %+v, want none", open)
	}
}

func staffMembers(t *testing.T, r StaffRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	now := time.Now().UTC().Truncate(time.Second)
	admin, err := r.Staff.ClaimInvite(ctx, a.ID, invite(t, r, a.ID, "admin@a.example", staff.RoleAdmin, now).Hash(), now)
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := r.Staff.ClaimInvite(ctx, a.ID, invite(t, r, a.ID, "viewer@a.example", staff.RoleViewer, now).Hash(), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Staff.Member(ctx, b.ID, admin.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's member: %v", err)
	}
	if list, _ := r.Staff.Members(ctx, b.ID); len(list) != 0 {
		t.Errorf("another company lists %d members", len(list))
	}
	if list, _ := r.Staff.Members(ctx, a.ID); len(list) != 2 {
		t.Errorf("members: %d, want 2", len(list))
	}
	if _, err := r.Staff.ClaimInvite(ctx, b.ID, invite(t, r, b.ID, "admin@a.example", staff.RoleAdmin, now).Hash(), now); err != nil {
		t.Fatal(err)
	}
	if found, err := r.Staff.MembersByEmail(ctx, "admin@a.example"); err != nil || len(found) != 2 || found[0].Company == found[1].Company {
		t.Errorf("an address's accounts in two companies: %+v %v", found, err)
	}
	if err := r.Staff.SetRole(ctx, b.ID, viewer.ID, staff.RoleAdmin); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's role change: %v", err)
	}
	if err := r.Staff.RemoveMember(ctx, b.ID, viewer.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's removal: %v", err)
	}
	if err := r.Staff.SetRole(ctx, a.ID, admin.ID, staff.RoleViewer); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("demoting the last admin: %v", err)
	}
	if err := r.Staff.RemoveMember(ctx, a.ID, admin.ID); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("removing the last admin: %v", err)
	}

	key := staff.Passkey{ID: []byte("credential-1-" + a.ID.String()), Company: a.ID, Member: viewer.ID, Name: "Laptop", Credential: []byte(`{"k":1}`), CreatedAt: now}
	if err := r.Staff.AddPasskey(ctx, staff.Passkey{ID: []byte("x-" + a.ID.String()), Company: b.ID, Member: viewer.ID, Name: "x", Credential: []byte("{}"), CreatedAt: now}); err == nil {
		t.Error("a passkey of another company's member was stored")
	}
	if err := r.Staff.AddPasskey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := r.Staff.UsePasskey(ctx, b.ID, key.ID, []byte(`{"k":2}`), now); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's passkey use: %v", err)
	}
	if err := r.Staff.UsePasskey(ctx, a.ID, key.ID, []byte(`{"k":2}`), now); err != nil {
		t.Fatal(err)
	}
	keys, err := r.Staff.Passkeys(ctx, a.ID, viewer.ID)
	if err != nil || len(keys) != 1 || string(keys[0].Credential) != `{"k":2}` || keys[0].LastUsedAt == nil {
		t.Fatalf("passkeys: %+v %v", keys, err)
	}
	if keys, _ := r.Staff.Passkeys(ctx, b.ID, viewer.ID); len(keys) != 0 {
		t.Errorf("another company lists %d passkeys", len(keys))
	}
	if err := r.Staff.RemovePasskey(ctx, a.ID, admin.ID, key.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("removing another member's passkey: %v", err)
	}

	if err := r.Staff.SetRole(ctx, a.ID, viewer.ID, staff.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := r.Staff.RemoveMember(ctx, a.ID, admin.ID); err != nil {
		t.Fatalf("removing an admin while another stays: %v", err)
	}
	if err := r.Staff.RemoveMember(ctx, a.ID, viewer.ID); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("removing the new last admin: %v", err)
	}
	if err := r.Staff.RemovePasskey(ctx, a.ID, viewer.ID, key.ID); err != nil {
		t.Errorf("removing one's own passkey: %v", err)
	}
}
