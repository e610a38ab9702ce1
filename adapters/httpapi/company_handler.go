package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// CompanySection is GET resource/company: the token's company's profile.
type CompanySection struct{ profiles ports.CompanyProfiles }

// NewCompanySection serves profiles.
func NewCompanySection(profiles ports.CompanyProfiles) *CompanySection {
	return &CompanySection{profiles: profiles}
}

func (h *CompanySection) Register(r fiber.Router) {
	r.Get("/company", requireScope(domain.ScopeCompanyRead), h.get)
}

type companyProfile struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TimeZone string `json:"time_zone"`
	Plan     string `json:"plan"`
	// StorageQuota and StorageUsed are deprecated since 2026-11-24, sunset
	// 2027-01-05 (api/notes.json): their names do not say their unit.
	StorageQuota      int64     `json:"storage_quota"`
	StorageUsed       int64     `json:"storage_used"`
	StorageQuotaBytes int64     `json:"storage_quota_bytes"`
	StorageUsedBytes  int64     `json:"storage_used_bytes"`
	BookingNotice     int       `json:"booking_notice_minutes"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

func (h *CompanySection) get(c *fiber.Ctx) error {
	company, err := h.profiles.Profile(c.UserContext(), grantOf(c).CompanyID)
	if err != nil {
		return err
	}
	return c.JSON(companyProfile{
		ID: company.ID.String(), Name: company.Name, TimeZone: company.TimeZone, Plan: company.Plan.String(),
		StorageQuota: company.StorageQuota, StorageUsed: company.StorageUsed,
		StorageQuotaBytes: company.StorageQuota, StorageUsedBytes: company.StorageUsed, BookingNotice: company.BookingNoticeMinutes,
		CreatedAt: company.CreatedAt, UpdatedAt: company.UpdatedAt,
	})
}
